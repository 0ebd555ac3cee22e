// GET /: the status page, one self-contained HTML document (no CDN, no
// external font) compiled into the binary from node/api/status_page.html.
#pragma once

#include <string_view>

namespace mesh::api {

std::string_view status_page_html();

// Its Content-Security-Policy (docs/API.md, "GET /"): its own inline script
// and style only (allowed by their SHA-256), requests to this node only, no
// other source of anything, and no page may frame it.
std::string_view status_page_csp();

}  // namespace mesh::api
