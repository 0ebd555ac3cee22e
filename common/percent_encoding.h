// Percent-encoding (RFC 3986, section 2.1): every byte but the unreserved
// ASCII letters, digits and "-._~" as "%XX" in upper-case hex. Good for a
// path segment, a query value and an application/x-www-form-urlencoded
// value alike. Used by meshctl's API requests and the Marzban client's
// login form.
#pragma once

#include <string>
#include <string_view>

namespace mesh {

std::string percent_encoded(std::string_view value);

}  // namespace mesh
