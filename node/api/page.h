// GET /: the status page, one self-contained HTML document (no CDN, no
// external font) compiled into the binary from node/api/status_page.html.
#pragma once

#include <string_view>

namespace mesh::api {

std::string_view status_page_html();

}  // namespace mesh::api
