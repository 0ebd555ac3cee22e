// The probe's ClientHello (node/tls_hello.h; docs/PROTOCOL.md, "The TLS
// stage"): what a browser offers, without GREASE, padding or a key share.
#include <string>

#include "common/check.h"
#include "node/tls_hello.h"
#include "node/tls_hello_codes.h"

namespace mesh::node {
namespace {

using Bytes = std::vector<std::uint8_t>;

void put16(Bytes& out, std::uint16_t value) {
  out.push_back(static_cast<std::uint8_t>(value >> 8));
  out.push_back(static_cast<std::uint8_t>(value));
}

// Writes `value` big-endian in `width` bytes at `at`, over a placeholder.
void patch_length(Bytes& out, std::size_t at, std::size_t width, std::size_t value) {
  for (std::size_t i = 0; i < width; ++i) {
    out[at + i] = static_cast<std::uint8_t>(value >> (8 * (width - 1 - i)));
  }
}

// A length-prefixed block: `fill` appends its body; the prefix (`width`
// bytes) is written once the body's length is known.
template <typename Fill>
void block(Bytes& out, std::size_t width, Fill fill) {
  const std::size_t at = out.size();
  out.insert(out.end(), width, 0);
  fill();
  patch_length(out, at, width, out.size() - at - width);
}

void extension(Bytes& out, std::uint16_t type, auto fill) {
  put16(out, type);
  block(out, 2, fill);
}

void put16_list(Bytes& out, std::size_t width, std::span<const std::uint16_t> values) {
  block(out, width, [&] {
    for (const std::uint16_t value : values) put16(out, value);
  });
}

void put_extensions(Bytes& out, std::string_view sni) {
  using namespace tls;
  if (!sni.empty()) {
    extension(out, kExtServerName, [&] {
      block(out, 2, [&] {
        out.push_back(0);  // host_name
        block(out, 2, [&] { out.insert(out.end(), sni.begin(), sni.end()); });
      });
    });
  }
  extension(out, kExtExtendedMasterSecret, [] {});
  extension(out, kExtRenegotiationInfo, [&] { out.push_back(0); });
  extension(out, kExtSupportedGroups, [&] { put16_list(out, 2, kOfferedGroups); });
  extension(out, kExtEcPointFormats, [&] { out.insert(out.end(), {1, 0}); });  // uncompressed
  extension(out, kExtSessionTicket, [] {});
  extension(out, kExtAlpn, [&] {
    block(out, 2, [&] {
      for (const std::string_view name : kOfferedAlpn) {
        out.push_back(static_cast<std::uint8_t>(name.size()));
        out.insert(out.end(), name.begin(), name.end());
      }
    });
  });
  extension(out, kExtStatusRequest, [&] { out.insert(out.end(), {1, 0, 0, 0, 0}); });  // OCSP
  extension(out, kExtSignatureAlgorithms, [&] { put16_list(out, 2, kOfferedSignatures); });
  extension(out, kExtSignedCertificateTimestamp, [] {});
  // No share (RFC 8446 §4.2.8: the client asks for a HelloRetryRequest):
  // a TLS 1.3 server answers with a HelloRetryRequest of about 100 bytes,
  // instead of a ServerHello followed by its certificate chain in the same
  // flight, so a TLS probe costs about a third of what it did.
  extension(out, kExtKeyShare, [&] { block(out, 2, [] {}); });
  extension(out, kExtPskKeyExchangeModes, [&] { out.insert(out.end(), {1, 1}); });  // psk_dhe_ke
  extension(out, kExtSupportedVersions, [&] {
    block(out, 1, [&] {
      put16(out, kVersionTls13);
      put16(out, kVersionTls12);
    });
  });
}

}  // namespace

std::vector<std::uint8_t> client_hello(std::string_view sni, const ClientHelloSecrets& secrets) {
  MESH_CHECK(sni.size() <= kHelloSniBytesMax, "client_hello: SNI longer than a DNS name");
  using namespace tls;
  Bytes out;
  out.reserve(320 + sni.size());
  out.push_back(kRecordHandshake);
  put16(out, kVersionTls10);  // legacy_record_version of a first ClientHello (RFC 8446 §5.1)
  block(out, 2, [&] {
    out.push_back(kHandshakeClientHello);
    block(out, 3, [&] {
      put16(out, kVersionTls12);  // legacy_version
      out.insert(out.end(), secrets.random.begin(), secrets.random.end());
      block(out, 1, [&] {
        out.insert(out.end(), secrets.session_id.begin(), secrets.session_id.end());
      });
      put16_list(out, 2, kOfferedSuites);
      out.insert(out.end(), {1, 0});  // legacy_compression_methods: null only
      block(out, 2, [&] { put_extensions(out, sni); });
    });
  });
  return out;
}

}  // namespace mesh::node
