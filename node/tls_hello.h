// The TLS stage of a probe without a TLS library: the ClientHello a user's
// app sends, and a strict reader of the server's answer up to its
// ServerHello (docs/PROTOCOL.md, "Probes", "The TLS stage"). A censor that
// filters by SNI acts on the ClientHello (a reset, a drop, an alert) before
// any ServerHello, so nothing after the ServerHello is read, and no key is
// ever derived: the probe needs the bytes of the hello, not a TLS engine.
// Pure code: no socket, no clock; the caller draws the random parts.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace mesh::node {

// The longest SNI a ClientHello carries (a DNS name is at most 253).
inline constexpr std::size_t kHelloSniBytesMax = 253;
// The longest ServerHello message body accepted (RFC 8446 puts no bound;
// one that answers our hello, key share included, is about 120 bytes).
inline constexpr std::size_t kServerHelloBytesMax = 4096;
// The largest TLS plaintext record (RFC 8446 §5.1: 2^14).
inline constexpr std::size_t kTlsRecordBytesMax = 16384;
// Warning alerts skipped before the ServerHello (an old server's warning
// unrecognized_name); one more is an answer that is not a hello.
inline constexpr int kHelloWarningsMax = 4;

// What each ClientHello draws afresh, as a TLS 1.3 client does: the random
// and the legacy session id (middlebox compatibility, RFC 8446 §D.4).
struct ClientHelloSecrets {
  std::array<std::uint8_t, 32> random{};
  std::array<std::uint8_t, 32> session_id{};
};

// The ClientHello as one TLS record (header included): TLS 1.3 and 1.2, a
// browser's cipher suites, groups and signature algorithms, ALPN "h2",
// "http/1.1", server_name = `sni` (none when empty), and a key_share
// extension with no share: a TLS 1.3 server answers it with a
// HelloRetryRequest, which is all the probe needs to know the hello passed,
// and which holds back the server's certificate chain.
// REQUIRES: sni.size() <= kHelloSniBytesMax.
std::vector<std::uint8_t> client_hello(std::string_view sni, const ClientHelloSecrets& secrets);

enum class ServerAnswer : std::uint8_t {
  incomplete,    // more bytes are needed
  server_hello,  // a well-formed ServerHello (or HelloRetryRequest) to our hello
  alert,         // a fatal alert, or close_notify, before the ServerHello
  not_tls,       // anything else: not TLS, malformed, or not an answer to our hello
};

// Reads the server's first bytes. Strict: the first record must be a
// handshake or alert record of TLS framing, the first handshake message a
// ServerHello no longer than kServerHelloBytesMax whose version, session id
// echo, cipher suite, compression and extensions answer the hello built
// from `session_id` (in TLS 1.3 a HelloRetryRequest: the hello shared no
// key); the decision is taken as soon as the ServerHello is
// whole, without waiting for the rest of its record. Holds at most the
// ServerHello's bytes. Not thread-safe.
class ServerHelloReader {
 public:
  explicit ServerHelloReader(const std::array<std::uint8_t, 32>& session_id);

  // Takes the next bytes received. Once the answer is decided, later bytes
  // change nothing and the answer is returned again.
  ServerAnswer feed(std::span<const std::uint8_t> bytes);

  ServerAnswer answer() const { return answer_; }
  // After server_hello: 0x0304 (TLS 1.3) or 0x0303 (TLS 1.2), the suite
  // chosen, and whether it was a HelloRetryRequest.
  std::uint16_t version() const { return version_; }
  std::uint16_t cipher_suite() const { return cipher_suite_; }
  bool hello_retry() const { return hello_retry_; }
  // After alert: the alert's description (RFC 8446 §6).
  std::uint8_t alert_description() const { return alert_[1]; }

 private:
  std::size_t take_header(std::span<const std::uint8_t> bytes);
  std::size_t take_body(std::span<const std::uint8_t> bytes);
  void on_header();
  void on_alert();
  void on_handshake_bytes();
  std::size_t message_bytes() const;  // the ServerHello's length, from its header
  ServerAnswer judge_server_hello(std::span<const std::uint8_t> body);

  std::array<std::uint8_t, 32> session_id_;
  ServerAnswer answer_ = ServerAnswer::incomplete;
  std::array<std::uint8_t, 5> header_{};
  std::size_t header_fill_ = 0;
  std::size_t body_left_ = 0;  // bytes of the current record not yet taken
  std::array<std::uint8_t, 2> alert_{};
  std::size_t alert_fill_ = 0;
  int warnings_ = 0;
  std::vector<std::uint8_t> handshake_;  // the ServerHello so far, header included
  std::uint16_t version_ = 0;
  std::uint16_t cipher_suite_ = 0;
  bool hello_retry_ = false;
};

}  // namespace mesh::node
