// The probe's ClientHello and the strict reader of the server's answer
// (node/tls_hello.h), byte by byte. prober_test.cc takes the same code
// through real OpenSSL servers.
#include "node/tls_hello.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "node/agent/wire_cost.h"
#include "node/tls_hello_codes.h"

namespace mesh::node {
namespace {

using Bytes = std::vector<std::uint8_t>;

ClientHelloSecrets fixed_secrets() {
  ClientHelloSecrets secrets;
  for (std::size_t i = 0; i < 32; ++i) {
    secrets.random[i] = static_cast<std::uint8_t>(i);
    secrets.session_id[i] = static_cast<std::uint8_t>(0x40 + i);
  }
  return secrets;
}

Bytes our_session_id() {
  const auto id = fixed_secrets().session_id;
  return Bytes(id.begin(), id.end());
}

void put16(Bytes& out, std::size_t value) {
  out.push_back(static_cast<std::uint8_t>(value >> 8));
  out.push_back(static_cast<std::uint8_t>(value));
}

std::size_t read16(const Bytes& bytes, std::size_t at) {
  return static_cast<std::size_t>(bytes[at] << 8 | bytes[at + 1]);
}

// A ServerHello message body, field by field, to be spoiled by the cases:
// by default the HelloRetryRequest a TLS 1.3 server answers our hello with
// (it shares no key), naming X25519.
struct Hello {
  std::uint16_t legacy_version = tls::kVersionTls12;
  std::array<std::uint8_t, 32> random = tls::kHelloRetryRandom;
  Bytes session_echo = our_session_id();
  std::uint16_t suite = 0x1301;
  std::uint8_t compression = 0;
  bool with_extensions = true;
  std::vector<std::pair<std::uint16_t, Bytes>> extensions = {
      {tls::kExtSupportedVersions, {0x03, 0x04}},
      {tls::kExtKeyShare, {0x00, 0x1d}},
  };

  static Bytes key_share(std::uint16_t group, std::size_t key_bytes) {
    Bytes out;
    put16(out, group);
    put16(out, key_bytes);
    out.insert(out.end(), key_bytes, 0x5a);
    return out;
  }

  Bytes body() const {
    Bytes out;
    put16(out, legacy_version);
    out.insert(out.end(), random.begin(), random.end());
    out.push_back(static_cast<std::uint8_t>(session_echo.size()));
    out.insert(out.end(), session_echo.begin(), session_echo.end());
    put16(out, suite);
    out.push_back(compression);
    if (!with_extensions) return out;
    Bytes list;
    for (const auto& [type, data] : extensions) {
      put16(list, type);
      put16(list, data.size());
      list.insert(list.end(), data.begin(), data.end());
    }
    put16(out, list.size());
    out.insert(out.end(), list.begin(), list.end());
    return out;
  }
};

// A TLS 1.2 ServerHello, as an old server answers.
Hello tls12_hello() {
  Hello hello;
  hello.random = {};
  hello.suite = 0xc02f;
  hello.session_echo.clear();
  hello.extensions = {{tls::kExtRenegotiationInfo, {0}}, {tls::kExtAlpn, {0, 3, 2, 'h', '2'}}};
  return hello;
}

Bytes handshake_message(std::uint8_t type, const Bytes& body) {
  Bytes out = {type, static_cast<std::uint8_t>(body.size() >> 16)};
  put16(out, body.size());
  out.insert(out.end(), body.begin(), body.end());
  return out;
}

Bytes record(std::uint8_t type, const Bytes& body, std::uint16_t version = tls::kVersionTls12) {
  Bytes out = {type};
  put16(out, version);
  put16(out, body.size());
  out.insert(out.end(), body.begin(), body.end());
  return out;
}

Bytes hello_record(const Hello& hello) {
  return record(tls::kRecordHandshake, handshake_message(tls::kHandshakeServerHello, hello.body()));
}

ServerAnswer read_all(const Bytes& bytes) {
  ServerHelloReader reader(fixed_secrets().session_id);
  return reader.feed(bytes);
}

Bytes concat(Bytes a, const Bytes& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST_CASE("the ClientHello is one well-formed record carrying the SNI, ALPN and a key share with no key") {
  const auto secrets = fixed_secrets();
  const Bytes hello = client_hello("cdn.example.com", secrets);
  REQUIRE(hello.size() == 241);  // docs/PROTOCOL.md, "The TLS stage"
  CHECK(hello.size() == agent::kTypicalClientHelloBytes);  // meshsim's TLS probe is modelled with it
  CHECK(hello[0] == tls::kRecordHandshake);
  CHECK(read16(hello, 1) == tls::kVersionTls10);
  CHECK(read16(hello, 3) == hello.size() - 5);
  CHECK(hello[5] == tls::kHandshakeClientHello);
  CHECK((hello[6] << 16 | read16(hello, 7)) == static_cast<int>(hello.size() - 9));
  CHECK(read16(hello, 9) == tls::kVersionTls12);
  CHECK(std::equal(secrets.random.begin(), secrets.random.end(), hello.begin() + 11));
  CHECK(hello[43] == 32);
  CHECK(std::equal(secrets.session_id.begin(), secrets.session_id.end(), hello.begin() + 44));
  const std::string text(hello.begin(), hello.end());
  CHECK(text.find("cdn.example.com") != std::string::npos);
  CHECK(text.find("\x02h2\x08http/1.1") != std::string::npos);
  // key_share (51) with an empty client_shares, then psk_key_exchange_modes.
  CHECK(text.find(std::string("\x00\x33\x00\x02\x00\x00\x00\x2d", 8)) != std::string::npos);
  // Without an SNI the hello carries no server_name extension; a DNS name
  // of the longest length fits.
  CHECK(client_hello("", secrets).size() == hello.size() - 9 - 15);
  CHECK(client_hello(std::string(kHelloSniBytesMax, 'a'), secrets).size() ==
        hello.size() - 15 + kHelloSniBytesMax);
}

TEST_CASE("a TLS 1.3 HelloRetryRequest is read whole, and byte by byte") {
  const Bytes bytes = hello_record(Hello{});
  CHECK(read_all(bytes) == ServerAnswer::server_hello);
  ServerHelloReader reader(fixed_secrets().session_id);
  for (std::size_t i = 0; i + 1 < bytes.size(); ++i) {
    REQUIRE(reader.feed(std::span(bytes).subspan(i, 1)) == ServerAnswer::incomplete);
  }
  CHECK(reader.feed(std::span(bytes).last(1)) == ServerAnswer::server_hello);
  CHECK(reader.version() == tls::kVersionTls13);
  CHECK(reader.cipher_suite() == 0x1301);
  CHECK(reader.hello_retry());
  // Later bytes change nothing.
  CHECK(reader.feed(Bytes{0xff, 0xff}) == ServerAnswer::server_hello);
}

TEST_CASE("a ServerHello is decided before the rest of its record arrives") {
  // A TLS 1.2 server's first record: ServerHello, then its certificate.
  Bytes flight = handshake_message(tls::kHandshakeServerHello, tls12_hello().body());
  flight = concat(flight, handshake_message(11, Bytes(9000, 0x30)));
  const Bytes bytes = record(tls::kRecordHandshake, flight);
  const std::size_t hello_end = 5 + 4 + tls12_hello().body().size();
  ServerHelloReader reader(fixed_secrets().session_id);
  CHECK(reader.feed(std::span(bytes).first(hello_end - 1)) == ServerAnswer::incomplete);
  CHECK(reader.feed(std::span(bytes).subspan(hello_end - 1, 1)) == ServerAnswer::server_hello);
  CHECK(reader.version() == tls::kVersionTls12);
  CHECK(reader.cipher_suite() == 0xc02f);
}

TEST_CASE("TLS 1.2 answers, a HelloRetryRequest for another group or a cookie, a hello split over records") {
  CHECK(read_all(hello_record(tls12_hello())) == ServerAnswer::server_hello);
  Hello bare = tls12_hello();
  bare.with_extensions = false;  // legal in TLS 1.2
  CHECK(read_all(hello_record(bare)) == ServerAnswer::server_hello);

  Hello retry;
  retry.random = tls::kHelloRetryRandom;
  retry.extensions = {{tls::kExtSupportedVersions, {0x03, 0x04}},
                      {tls::kExtKeyShare, {0x00, 0x17}},
                      {tls::kExtCookie, {0, 2, 7, 7}}};
  ServerHelloReader reader(fixed_secrets().session_id);
  CHECK(reader.feed(hello_record(retry)) == ServerAnswer::server_hello);
  CHECK(reader.hello_retry());
  retry.extensions = {{tls::kExtSupportedVersions, {0x03, 0x04}}, {tls::kExtCookie, {0, 2, 7, 7}}};
  CHECK(read_all(hello_record(retry)) == ServerAnswer::server_hello);

  const Bytes message = handshake_message(tls::kHandshakeServerHello, Hello{}.body());
  const Bytes first(message.begin(), message.begin() + 10);
  const Bytes second(message.begin() + 10, message.end());
  CHECK(read_all(concat(record(tls::kRecordHandshake, first),
                        record(tls::kRecordHandshake, second))) == ServerAnswer::server_hello);
}

TEST_CASE("alerts: fatal and close_notify answer; warnings are skipped, a few") {
  ServerHelloReader reader(fixed_secrets().session_id);
  CHECK(reader.feed(record(tls::kRecordAlert, {2, 112})) == ServerAnswer::alert);
  CHECK(reader.alert_description() == 112);
  CHECK(read_all(record(tls::kRecordAlert, {1, 0})) == ServerAnswer::alert);

  const Bytes warning = record(tls::kRecordAlert, {1, 112});
  CHECK(read_all(concat(warning, hello_record(Hello{}))) == ServerAnswer::server_hello);
  Bytes warnings;
  for (int i = 0; i <= kHelloWarningsMax; ++i) warnings = concat(warnings, warning);
  CHECK(read_all(warnings) == ServerAnswer::not_tls);
}

TEST_CASE("every answer that is not TLS, or not a hello to ours, is not_tls") {
  const auto spoiled = [](auto spoil) {
    Hello hello;
    spoil(hello);
    return read_all(hello_record(hello));
  };
  // Not TLS at all: an HTTP answer, a block page.
  const std::string http = "HTTP/1.1 403 Forbidden\r\n\r\n";
  CHECK(read_all(Bytes(http.begin(), http.end())) == ServerAnswer::not_tls);
  // Record framing.
  CHECK(read_all(record(23, {1, 2, 3})) == ServerAnswer::not_tls);  // application data
  CHECK(read_all(record(20, {1})) == ServerAnswer::not_tls);         // change_cipher_spec first
  CHECK(read_all(record(tls::kRecordHandshake, {}, 0x0303)) == ServerAnswer::not_tls);
  CHECK(read_all(record(tls::kRecordHandshake, {2}, 0x0203)) == ServerAnswer::not_tls);
  CHECK(read_all(Bytes{22, 3, 3, 0x40, 0x01}) == ServerAnswer::not_tls);  // 16385 bytes
  CHECK(read_all(record(tls::kRecordAlert, {2, 40, 0})) == ServerAnswer::not_tls);
  CHECK(read_all(record(tls::kRecordAlert, {3, 40})) == ServerAnswer::not_tls);
  // An alert between two records of one ServerHello (RFC 8446 §5.1).
  const Bytes message = handshake_message(tls::kHandshakeServerHello, Hello{}.body());
  CHECK(read_all(concat(record(tls::kRecordHandshake, Bytes(message.begin(), message.begin() + 10)),
                        record(tls::kRecordAlert, {2, 40}))) == ServerAnswer::not_tls);
  // The first handshake message is not a ServerHello, or too short or long.
  CHECK(read_all(record(tls::kRecordHandshake, handshake_message(11, Bytes(50, 0)))) ==
        ServerAnswer::not_tls);
  CHECK(read_all(record(tls::kRecordHandshake, handshake_message(2, Bytes(37, 0)))) ==
        ServerAnswer::not_tls);
  CHECK(read_all(Bytes{22, 3, 3, 0x10, 0x00, 2, 0, 0x10, 0x01}) == ServerAnswer::not_tls);
  // Fields.
  CHECK(spoiled([](Hello& h) { h.legacy_version = 0x0302; }) == ServerAnswer::not_tls);
  CHECK(spoiled([](Hello& h) { h.suite = 0x00ff; }) == ServerAnswer::not_tls);
  CHECK(spoiled([](Hello& h) { h.compression = 1; }) == ServerAnswer::not_tls);
  CHECK(spoiled([](Hello& h) { h.session_echo[0] ^= 1; }) == ServerAnswer::not_tls);
  CHECK(spoiled([](Hello& h) { h.session_echo.assign(33, 0); }) == ServerAnswer::not_tls);
  CHECK(spoiled([](Hello& h) { h.suite = 0xc02f; }) == ServerAnswer::not_tls);  // 1.2 suite
  CHECK(spoiled([](Hello& h) { h.with_extensions = false; }) == ServerAnswer::not_tls);
  // Extensions: not offered, twice, a version not 1.3, a group not offered
  // or with a key, a ServerHello with a key share (we sent none, so it
  // answers no hello of ours), a cookie outside a HelloRetryRequest, a 1.3
  // suite in 1.2.
  CHECK(spoiled([](Hello& h) { h.extensions.push_back({0x0039, {}}); }) == ServerAnswer::not_tls);
  CHECK(spoiled([](Hello& h) { h.extensions.push_back(h.extensions[0]); }) ==
        ServerAnswer::not_tls);
  CHECK(spoiled([](Hello& h) { h.extensions[0].second = {0x03, 0x03}; }) ==
        ServerAnswer::not_tls);
  CHECK(spoiled([](Hello& h) { h.extensions[0].second = {0x03, 0x04, 0x00}; }) ==
        ServerAnswer::not_tls);
  CHECK(spoiled([](Hello& h) { h.extensions[1].second = {0x00, 0x1e}; }) == ServerAnswer::not_tls);  // X448
  CHECK(spoiled([](Hello& h) { h.extensions[1].second = Hello::key_share(0x001d, 32); }) ==
        ServerAnswer::not_tls);
  const auto server_hello = [](Hello& h) {
    h.random = {};
    h.extensions[1].second = Hello::key_share(0x001d, 32);
  };
  CHECK(spoiled(server_hello) == ServerAnswer::not_tls);
  CHECK(spoiled([&](Hello& h) {
          server_hello(h);
          h.extensions.pop_back();
        }) == ServerAnswer::not_tls);
  CHECK(spoiled([](Hello& h) {
          h.random = {};
          h.extensions.push_back({tls::kExtCookie, {0, 1, 1}});
        }) == ServerAnswer::not_tls);
  Hello old = tls12_hello();
  old.suite = 0x1301;
  CHECK(read_all(hello_record(old)) == ServerAnswer::not_tls);
  // A TLS 1.3 server's downgrade to 1.2 (RFC 8446 §4.1.3).
  Hello downgraded = tls12_hello();
  const std::string sentinel = "DOWNGRD\x01";
  std::copy(sentinel.begin(), sentinel.end(), downgraded.random.end() - 8);
  CHECK(read_all(hello_record(downgraded)) == ServerAnswer::not_tls);
  // Trailing bytes after the extensions, inside the message.
  Bytes body = Hello{}.body();
  body.push_back(0);
  CHECK(read_all(record(tls::kRecordHandshake, handshake_message(2, body))) ==
        ServerAnswer::not_tls);
}

}  // namespace
}  // namespace mesh::node
