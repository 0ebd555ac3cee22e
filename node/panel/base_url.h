// The base URL of a panel, a webhook or the Telegram Bot API, as the config
// gives it (docs/CONFIG.md, [panel] and [alerts]). Pure: the config reader
// checks URLs with it, the HTTP client (http_client.h) connects by it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mesh::panel {

inline constexpr std::size_t kUrlBytesMax = 2048;

// "http://host[:port][/path]" or "https://...": the base every request's
// target is appended to.
struct BaseUrl {
  bool tls = false;
  std::string host;  // a DNS name or an IP literal (IPv6 without brackets)
  std::uint16_t port = 0;
  std::string path;  // without a trailing '/', "" for the root
  bool operator==(const BaseUrl&) const = default;
};
// nullopt for anything else (user info, a query, a fragment, a bad port,
// a host of other characters than letters, digits, '.', '-', '_', ':').
std::optional<BaseUrl> parse_base_url(std::string_view text);
// "https://host:port/path", ports spelled out.
std::string format_base_url(const BaseUrl& url);

}  // namespace mesh::panel
