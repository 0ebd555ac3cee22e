#include <sodium.h>

#include <string>

#include "common/check.h"
#include "node/api/page.h"

namespace mesh::api {
namespace {

// 'sha256-<base64>' of the text between the page's one `open` tag and its
// `close` tag, as a Content-Security-Policy source that allows exactly it.
std::string inline_source(std::string_view page, std::string_view open, std::string_view close) {
  const auto begin = page.find(open);
  MESH_CHECK(begin != std::string_view::npos && page.find(open, begin + 1) == std::string_view::npos,
             "status page: one inline element of each kind (the policy hashes it)");
  const auto from = begin + open.size();
  const auto end = page.find(close, from);
  MESH_CHECK(end != std::string_view::npos, "status page: an inline element without its end tag");
  unsigned char digest[crypto_hash_sha256_BYTES];
  crypto_hash_sha256(digest, reinterpret_cast<const unsigned char*>(page.data() + from), end - from);
  char base64[sodium_base64_ENCODED_LEN(crypto_hash_sha256_BYTES, sodium_base64_VARIANT_ORIGINAL)];
  sodium_bin2base64(base64, sizeof base64, digest, sizeof digest, sodium_base64_VARIANT_ORIGINAL);
  return "'sha256-" + std::string(base64) + "'";
}

}  // namespace

std::string_view status_page_csp() {
  static const std::string policy = [] {
    const std::string_view page = status_page_html();
    return "default-src 'none'; script-src " + inline_source(page, "<script>", "</script>") +
           "; style-src " + inline_source(page, "<style>", "</style>") +
           "; connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
  }();
  return policy;
}

}  // namespace mesh::api
