// Host names, IP literals and free text: the syntax rules the roster uses for
// endpoints, SNI and route names (docs/CONFIG.md).
#pragma once

#include <string_view>

namespace mesh {

// True for a DNS name: 1..253 bytes, dot-separated labels of 1..63 bytes of
// [A-Za-z0-9-] that neither start nor end with '-', no empty label (so no
// trailing dot), and a last label that is not all digits (that would be an
// IPv4 address, or a typo of one).
bool is_dns_name(std::string_view host);

// True for a dotted-quad IPv4 literal ("192.0.2.1"; no leading zeros).
bool is_ipv4_literal(std::string_view host);

// True for an IPv6 literal without brackets ("2001:db8::1"; no zone id).
bool is_ipv6_literal(std::string_view host);

// True when `host` is a DNS name or an IPv4/IPv6 literal, at most
// kHostBytesMax bytes.
bool is_valid_host(std::string_view host);

// True for valid UTF-8 without control characters (U+0000..U+001F, U+007F),
// the rule for human text such as route names and self-check reasons.
bool is_printable_utf8(std::string_view text);

}  // namespace mesh
