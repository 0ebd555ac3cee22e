// The TLS code points of the probe's hello (node/tls_hello.h): IANA's TLS
// registries, RFC 8446 and RFC 5246. Private to node/tls_*_hello.cc and
// their tests.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace mesh::node::tls {

inline constexpr std::uint8_t kRecordAlert = 21;
inline constexpr std::uint8_t kRecordHandshake = 22;
inline constexpr std::uint8_t kHandshakeClientHello = 1;
inline constexpr std::uint8_t kHandshakeServerHello = 2;
inline constexpr std::uint8_t kAlertWarning = 1;
inline constexpr std::uint8_t kAlertFatal = 2;
inline constexpr std::uint8_t kAlertCloseNotify = 0;

inline constexpr std::uint16_t kVersionTls10 = 0x0301;
inline constexpr std::uint16_t kVersionTls12 = 0x0303;
inline constexpr std::uint16_t kVersionTls13 = 0x0304;

inline constexpr std::uint16_t kExtServerName = 0;
inline constexpr std::uint16_t kExtStatusRequest = 5;
inline constexpr std::uint16_t kExtSupportedGroups = 10;
inline constexpr std::uint16_t kExtEcPointFormats = 11;
inline constexpr std::uint16_t kExtSignatureAlgorithms = 13;
inline constexpr std::uint16_t kExtAlpn = 16;
inline constexpr std::uint16_t kExtSignedCertificateTimestamp = 18;
inline constexpr std::uint16_t kExtExtendedMasterSecret = 23;
inline constexpr std::uint16_t kExtSessionTicket = 35;
inline constexpr std::uint16_t kExtSupportedVersions = 43;
inline constexpr std::uint16_t kExtCookie = 44;
inline constexpr std::uint16_t kExtPskKeyExchangeModes = 45;
inline constexpr std::uint16_t kExtKeyShare = 51;
inline constexpr std::uint16_t kExtRenegotiationInfo = 0xff01;

inline constexpr std::uint16_t kGroupX25519 = 0x001d;
inline constexpr std::uint16_t kGroupSecp256r1 = 0x0017;
inline constexpr std::uint16_t kGroupSecp384r1 = 0x0018;

// A browser's order: the TLS 1.3 suites, then ECDHE with AEAD, then the
// CBC and RSA-kex suites old servers need.
inline constexpr std::array<std::uint16_t, 15> kOfferedSuites = {
    0x1301, 0x1302, 0x1303,                          // TLS_AES_128_GCM, AES_256_GCM, CHACHA20
    0xc02b, 0xc02f, 0xc02c, 0xc030, 0xcca9, 0xcca8,  // ECDHE_{ECDSA,RSA} AEAD
    0xc013, 0xc014, 0x009c, 0x009d, 0x002f, 0x0035,  // ECDHE CBC, RSA GCM, RSA CBC
};
inline constexpr std::array<std::uint16_t, 3> kOfferedGroups = {kGroupX25519, kGroupSecp256r1,
                                                                 kGroupSecp384r1};
inline constexpr std::array<std::uint16_t, 8> kOfferedSignatures = {
    0x0403, 0x0804, 0x0401, 0x0503, 0x0805, 0x0501, 0x0806, 0x0601};
inline constexpr std::array<std::string_view, 2> kOfferedAlpn = {"h2", "http/1.1"};

// Every extension the ClientHello offers: a ServerHello may answer these
// only (RFC 8446 §4.2), and a HelloRetryRequest also kExtCookie.
inline constexpr std::array<std::uint16_t, 13> kOfferedExtensions = {
    kExtServerName,    kExtExtendedMasterSecret,       kExtRenegotiationInfo,
    kExtSupportedGroups, kExtEcPointFormats,           kExtSessionTicket,
    kExtAlpn,          kExtStatusRequest,              kExtSignatureAlgorithms,
    kExtSignedCertificateTimestamp, kExtKeyShare,      kExtPskKeyExchangeModes,
    kExtSupportedVersions};

// The random of a HelloRetryRequest: SHA-256("HelloRetryRequest") (RFC 8446 §4.1.3).
inline constexpr std::array<std::uint8_t, 32> kHelloRetryRandom = {
    0xcf, 0x21, 0xad, 0x74, 0xe5, 0x9a, 0x61, 0x11, 0xbe, 0x1d, 0x8c, 0x02, 0x1e, 0x65, 0xb8, 0x91,
    0xc2, 0xa2, 0x11, 0x16, 0x7a, 0xbb, 0x8c, 0x5e, 0x07, 0x9e, 0x09, 0xe2, 0xc8, 0xa8, 0x33, 0x9c};

}  // namespace mesh::node::tls
