#include "record/address.h"

#include <arpa/inet.h>

#include <charconv>
#include <string>

#include "record/roster.h"

namespace mesh {
namespace {

bool is_ascii_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

bool is_dns_label(std::string_view label) {
  if (label.empty() || label.size() > 63) return false;
  if (label.front() == '-' || label.back() == '-') return false;
  for (char c : label) {
    if (!is_ascii_alnum(c) && c != '-') return false;
  }
  return true;
}

bool all_digits(std::string_view text) {
  for (char c : text) {
    if (!is_digit(c)) return false;
  }
  return !text.empty();
}

}  // namespace

bool is_dns_name(std::string_view host) {
  if (host.empty() || host.size() > kHostBytesMax) return false;
  std::string_view last;
  while (true) {
    std::size_t dot = host.find('.');
    std::string_view label = host.substr(0, dot);
    if (!is_dns_label(label)) return false;
    last = label;
    if (dot == std::string_view::npos) break;
    host.remove_prefix(dot + 1);
  }
  return !all_digits(last);
}

bool is_ipv4_literal(std::string_view host) {
  int parts = 0;
  while (true) {
    std::size_t dot = host.find('.');
    std::string_view part = host.substr(0, dot);
    if (!all_digits(part) || part.size() > 3 || (part.size() > 1 && part[0] == '0')) return false;
    unsigned value = 0;
    std::from_chars(part.data(), part.data() + part.size(), value);
    if (value > 255) return false;
    ++parts;
    if (dot == std::string_view::npos) break;
    host.remove_prefix(dot + 1);
  }
  return parts == 4;
}

bool is_ipv6_literal(std::string_view host) {
  if (host.empty() || host.size() > 45 || host.find(':') == std::string_view::npos) return false;
  for (char c : host) {
    bool hex = is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    if (!hex && c != ':' && c != '.') return false;
  }
  std::string text(host);
  unsigned char address[16];
  return ::inet_pton(AF_INET6, text.c_str(), address) == 1;
}

bool is_valid_host(std::string_view host) {
  if (host.empty() || host.size() > kHostBytesMax) return false;
  return is_dns_name(host) || is_ipv4_literal(host) || is_ipv6_literal(host);
}

bool is_printable_utf8(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    auto b = static_cast<unsigned char>(text[i]);
    if (b < 0x80) {
      if (b < 0x20 || b == 0x7f) return false;
      ++i;
      continue;
    }
    std::size_t length = (b & 0xe0) == 0xc0   ? 2
                         : (b & 0xf0) == 0xe0 ? 3
                         : (b & 0xf8) == 0xf0 ? 4
                                              : 0;
    if (length == 0 || i + length > text.size()) return false;
    std::uint32_t code = b & (0x7f >> length);
    for (std::size_t k = 1; k < length; ++k) {
      auto c = static_cast<unsigned char>(text[i + k]);
      if ((c & 0xc0) != 0x80) return false;
      code = code << 6 | (c & 0x3f);
    }
    static constexpr std::uint32_t kMinimum[] = {0, 0, 0x80, 0x800, 0x10000};
    if (code < kMinimum[length] || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) {
      return false;  // overlong, beyond Unicode, or a surrogate
    }
    if (code >= 0x80 && code < 0xa0) return false;  // C1 controls
    i += length;
  }
  return true;
}

std::string format_endpoint(const Endpoint& endpoint) {
  bool v6 = endpoint.host.find(':') != std::string::npos;
  std::string host = v6 ? "[" + endpoint.host + "]" : endpoint.host;
  return host + ":" + std::to_string(endpoint.port);
}

std::optional<Endpoint> parse_endpoint(std::string_view text, std::uint16_t default_port) {
  std::string_view host = text;
  std::string_view port_text;
  bool bracketed = !text.empty() && text.front() == '[';
  if (bracketed) {
    std::size_t close = text.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    host = text.substr(1, close - 1);
    std::string_view rest = text.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return std::nullopt;
      port_text = rest.substr(1);
      if (port_text.empty()) return std::nullopt;
    }
    if (!is_ipv6_literal(host)) return std::nullopt;
  } else {
    std::size_t colon = text.find(':');
    if (colon != std::string_view::npos) {
      // A second colon means an IPv6 literal without brackets: ambiguous.
      if (text.find(':', colon + 1) != std::string_view::npos) return std::nullopt;
      host = text.substr(0, colon);
      port_text = text.substr(colon + 1);
      if (port_text.empty()) return std::nullopt;
    }
    if (!is_valid_host(host)) return std::nullopt;
  }
  std::uint16_t port = default_port;
  if (!port_text.empty()) {
    if (!all_digits(port_text) || port_text.size() > 5) return std::nullopt;
    unsigned value = 0;
    std::from_chars(port_text.data(), port_text.data() + port_text.size(), value);
    if (value > 65535) return std::nullopt;
    port = static_cast<std::uint16_t>(value);
  }
  if (port == 0) return std::nullopt;
  return Endpoint{std::string(host), port};
}

}  // namespace mesh
