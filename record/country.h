// ISO 3166-1 alpha-2 country codes, the `country` of roster servers.
#pragma once

#include <string_view>

namespace mesh {

// True when `code` is an officially assigned ISO 3166-1 alpha-2 code in
// upper case ("DE"); false for lower case, user-assigned ("XK") or unassigned
// ("XX") codes.
bool is_iso3166_alpha2(std::string_view code);

}  // namespace mesh
