#include "common/http_url.h"

#include <charconv>

namespace mesh {
namespace {

Error<HttpUrlError> fail(HttpUrlError code, std::string message) { return make_error(code, std::move(message)); }

// Letters, digits, '.', '-', '_' for a name or an IPv4 address; ':' and
// '%' (a zone) inside an IPv6 literal's brackets only.
bool host_ok(std::string_view host, bool bracketed) {
  if (host.empty()) return false;
  for (char c : host) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                       c == '-' || c == '_';
    if (!plain && !(bracketed && (c == ':' || c == '%'))) return false;
  }
  return true;
}

}  // namespace

Result<HttpUrl, HttpUrlError> parse_http_url(std::string_view text) {
  if (text.size() > kUrlBytesMax) return fail(HttpUrlError::form, "longer than 2048 bytes");
  HttpUrl url;
  if (text.starts_with("https://")) {
    url.tls = true;
    text.remove_prefix(8);
  } else if (text.starts_with("http://")) {
    text.remove_prefix(7);
  } else {
    return fail(HttpUrlError::scheme, "give http://host:port or https://host:port");
  }
  if (text.find_first_of("?# \t\r\n") != std::string_view::npos) {
    return fail(HttpUrlError::form, "no query, fragment or space");
  }
  const auto slash = text.find('/');
  const std::string_view authority = text.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? std::string_view{} : text.substr(slash);
  if (authority.find('@') != std::string_view::npos) return fail(HttpUrlError::form, "no user name or password");
  std::string_view host = authority, port;
  bool port_given = false;
  const bool bracketed = authority.starts_with('[');
  if (bracketed) {
    const auto close = authority.find(']');
    const std::string_view after = close == std::string_view::npos ? "" : authority.substr(close + 1);
    if (close == std::string_view::npos || (!after.empty() && after[0] != ':')) {
      return fail(HttpUrlError::host, "an IPv6 address goes in brackets: https://[::1]:4717");
    }
    host = authority.substr(1, close - 1);
    port_given = !after.empty();
    if (port_given) port = after.substr(1);
  } else if (const auto colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
    port_given = true;
    if (host.find(':') != std::string_view::npos) {
      return fail(HttpUrlError::host, "an IPv6 address goes in brackets: https://[::1]:4717");
    }
  }
  if (!host_ok(host, bracketed)) return fail(HttpUrlError::host, "no valid host name or address");
  url.host = std::string(host);
  url.port = url.tls ? 443 : 80;
  if (port_given) {
    unsigned value = 0;
    auto [end, error] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (port.empty() || error != std::errc{} || end != port.data() + port.size() || value == 0 || value > 65535) {
      return fail(HttpUrlError::port, "the port must be 1..65535");
    }
    url.port = static_cast<std::uint16_t>(value);
  }
  while (path.ends_with('/')) path.remove_suffix(1);
  url.path = std::string(path);
  return url;
}

std::string format_http_url(const HttpUrl& url) {
  const bool ipv6 = url.host.find(':') != std::string::npos;
  return std::string(url.tls ? "https://" : "http://") + (ipv6 ? "[" + url.host + "]" : url.host) + ":" +
         std::to_string(url.port) + url.path;
}

}  // namespace mesh
