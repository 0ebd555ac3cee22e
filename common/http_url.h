// An http:// or https:// URL as an operator writes one: meshctl's --api,
// and the panel, webhook and Telegram Bot API bases in the config
// (docs/CONFIG.md, [panel] and [alerts]). One parser, so both refuse the
// same things with the same words. Pure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace mesh {

inline constexpr std::size_t kUrlBytesMax = 2048;

// "http://host[:port][/path]" or "https://...".
struct HttpUrl {
  bool tls = false;
  std::string host;  // a DNS name or an IP literal (IPv6 without its brackets)
  std::uint16_t port = 0;  // 80 / 443 when not given
  std::string path;  // without a trailing '/', "" for the root
  bool operator==(const HttpUrl&) const = default;
};

enum class HttpUrlError {
  scheme,  // not http:// or https://
  form,    // user info, a query or a fragment, or too long
  host,    // no host, a bad character, or IPv6 without brackets
  port,    // not 1..65535
};

// The error's message says what is wrong and how to write it, for the
// caller to put after its own name of the value ("--api '...': ").
Result<HttpUrl, HttpUrlError> parse_http_url(std::string_view text);

// "https://host:port/path", the port spelled out, IPv6 in brackets.
std::string format_http_url(const HttpUrl& url);

}  // namespace mesh
