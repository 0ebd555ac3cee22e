#include "node/panel/base_url.h"

#include <cctype>
#include <charconv>

namespace mesh::panel {

std::optional<BaseUrl> parse_base_url(std::string_view text) {
  if (text.size() > kUrlBytesMax) return std::nullopt;
  BaseUrl url;
  if (text.starts_with("https://")) {
    url.tls = true;
    text.remove_prefix(8);
  } else if (text.starts_with("http://")) {
    text.remove_prefix(7);
  } else {
    return std::nullopt;
  }
  const auto slash = text.find('/');
  std::string_view authority = text.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? std::string_view{} : text.substr(slash);
  if (authority.empty() || authority.find('@') != std::string_view::npos ||
      path.find_first_of("?# \t\r\n") != std::string_view::npos) {
    return std::nullopt;
  }
  std::string_view port_text;
  if (authority.front() == '[') {
    const auto close = authority.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    url.host = std::string(authority.substr(1, close - 1));
    std::string_view rest = authority.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return std::nullopt;
      port_text = rest.substr(1);
    }
  } else {
    const auto colon = authority.rfind(':');
    url.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port_text = authority.substr(colon + 1);
  }
  if (url.host.empty()) return std::nullopt;
  for (char c : url.host) {
    const bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == ':' || c == '_';
    if (!ok) return std::nullopt;
  }
  url.port = url.tls ? 443 : 80;
  if (!port_text.empty()) {
    unsigned value = 0;
    auto [end, error] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), value);
    if (error != std::errc{} || end != port_text.data() + port_text.size() || value == 0 || value > 65535) {
      return std::nullopt;
    }
    url.port = static_cast<std::uint16_t>(value);
  }
  while (path.ends_with('/')) path.remove_suffix(1);
  url.path = std::string(path);
  return url;
}

std::string format_base_url(const BaseUrl& url) {
  const bool ipv6 = url.host.find(':') != std::string::npos;
  return std::string(url.tls ? "https://" : "http://") + (ipv6 ? "[" + url.host + "]" : url.host) + ":" +
         std::to_string(url.port) + url.path;
}

}  // namespace mesh::panel
