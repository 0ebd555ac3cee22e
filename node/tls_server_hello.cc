// The strict reader of the server's answer to the probe's ClientHello
// (node/tls_hello.h; docs/PROTOCOL.md, "The TLS stage").
#include <algorithm>
#include <vector>

#include "node/tls_hello.h"
#include "node/tls_hello_codes.h"

namespace mesh::node {
namespace {

constexpr std::size_t kRecordHeaderBytes = 5;
constexpr std::size_t kHandshakeHeaderBytes = 4;
// version 2 + random 32 + session id length 1 + suite 2 + compression 1.
constexpr std::size_t kServerHelloBytesMin = 38;
// The last 8 bytes of a TLS 1.2 ServerHello's random from a server that
// speaks TLS 1.3 (RFC 8446 §4.1.3): a downgrade the client must refuse.
constexpr std::array<std::uint8_t, 8> kDowngradeTls12 = {'D', 'O', 'W', 'N', 'G', 'R', 'D', 1};

// Reads big-endian fields off a byte span; once a read runs past the end,
// every later read yields zeros and ok() is false.
class Cursor {
 public:
  explicit Cursor(std::span<const std::uint8_t> bytes) : bytes_(bytes) {}
  bool ok() const { return ok_; }
  std::size_t left() const { return bytes_.size() - at_; }
  std::span<const std::uint8_t> take(std::size_t n) {
    if (!ok_ || n > left()) {
      ok_ = false;
      return {};
    }
    at_ += n;
    return bytes_.subspan(at_ - n, n);
  }
  std::uint8_t u8() {
    const auto b = take(1);
    return b.empty() ? 0 : b[0];
  }
  std::uint16_t u16() {
    const auto b = take(2);
    return b.empty() ? 0 : static_cast<std::uint16_t>(b[0] << 8 | b[1]);
  }

 private:
  std::span<const std::uint8_t> bytes_;
  std::size_t at_ = 0;
  bool ok_ = true;
};

template <typename List>
bool contains(const List& list, std::uint16_t value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

bool is_tls13_suite(std::uint16_t suite) { return (suite >> 8) == 0x13; }

// What the extensions of a ServerHello said, for the checks by version.
struct Extensions {
  bool ok = true;
  bool supported_versions = false;
  bool key_share = false;
  std::uint16_t key_share_group = 0;
};

Extensions read_extensions(Cursor& cursor, bool hello_retry) {
  Extensions out;
  std::vector<std::uint16_t> seen;
  while (out.ok && cursor.left() > 0) {
    const std::uint16_t type = cursor.u16();
    Cursor data(cursor.take(cursor.u16()));
    const bool offered = contains(tls::kOfferedExtensions, type) ||
                         (hello_retry && type == tls::kExtCookie);
    out.ok = cursor.ok() && offered && !contains(seen, type);
    seen.push_back(type);
    if (type == tls::kExtSupportedVersions) {
      out.supported_versions = true;
      out.ok = out.ok && data.u16() == tls::kVersionTls13;
    } else if (type == tls::kExtKeyShare) {
      out.key_share = true;
      out.key_share_group = data.u16();
      if (!hello_retry) data.take(data.u16());  // a ServerHello's key: read, for strictness
    } else {
      data.take(data.left());
    }
    out.ok = out.ok && data.ok() && data.left() == 0;
  }
  return out;
}

}  // namespace

ServerHelloReader::ServerHelloReader(const std::array<std::uint8_t, 32>& session_id)
    : session_id_(session_id) {}

ServerAnswer ServerHelloReader::feed(std::span<const std::uint8_t> bytes) {
  while (answer_ == ServerAnswer::incomplete && !bytes.empty()) {
    const std::size_t used = body_left_ == 0 ? take_header(bytes) : take_body(bytes);
    bytes = bytes.subspan(used);
  }
  return answer_;
}

std::size_t ServerHelloReader::take_header(std::span<const std::uint8_t> bytes) {
  const std::size_t n = std::min(kRecordHeaderBytes - header_fill_, bytes.size());
  std::copy_n(bytes.begin(), n, header_.begin() + static_cast<std::ptrdiff_t>(header_fill_));
  header_fill_ += n;
  if (header_fill_ == kRecordHeaderBytes) {
    header_fill_ = 0;
    on_header();
  }
  return n;
}

// TLS framing (major version 3), a length within the plaintext bound, and
// a handshake record, or a 2-byte alert record between handshake messages.
void ServerHelloReader::on_header() {
  const std::uint8_t type = header_[0];
  const std::size_t length = static_cast<std::size_t>(header_[3] << 8 | header_[4]);
  const bool framing = header_[1] == 3 && header_[2] <= 4 && length > 0 &&
                       length <= kTlsRecordBytesMax;
  const bool alert_ok = type == tls::kRecordAlert && length == 2 && handshake_.empty();
  if (!framing || (type != tls::kRecordHandshake && !alert_ok)) {
    answer_ = ServerAnswer::not_tls;
    return;
  }
  body_left_ = length;
  alert_fill_ = 0;
}

std::size_t ServerHelloReader::take_body(std::span<const std::uint8_t> bytes) {
  const std::size_t n = std::min(body_left_, bytes.size());
  body_left_ -= n;
  if (header_[0] == tls::kRecordAlert) {
    std::copy_n(bytes.begin(), n, alert_.begin() + static_cast<std::ptrdiff_t>(alert_fill_));
    alert_fill_ += n;
    if (alert_fill_ == alert_.size()) on_alert();
    return n;
  }
  // Takes the ServerHello's bytes only; what follows it in the record
  // (the rest of the server's flight) is never needed.
  auto part = bytes.first(n);
  while (!part.empty() && answer_ == ServerAnswer::incomplete) {
    const std::size_t want = handshake_.size() < kHandshakeHeaderBytes
                                 ? kHandshakeHeaderBytes - handshake_.size()
                                 : kHandshakeHeaderBytes + message_bytes() - handshake_.size();
    const std::size_t take = std::min(want, part.size());
    handshake_.insert(handshake_.end(), part.begin(), part.begin() + static_cast<std::ptrdiff_t>(take));
    part = part.subspan(take);
    on_handshake_bytes();
  }
  return n;
}

std::size_t ServerHelloReader::message_bytes() const {
  return static_cast<std::size_t>(handshake_[1]) << 16 |
         static_cast<std::size_t>(handshake_[2]) << 8 | handshake_[3];
}

void ServerHelloReader::on_handshake_bytes() {
  if (handshake_.size() < kHandshakeHeaderBytes) return;
  const std::size_t length = message_bytes();
  if (handshake_[0] != tls::kHandshakeServerHello || length < kServerHelloBytesMin ||
      length > kServerHelloBytesMax) {
    answer_ = ServerAnswer::not_tls;
    return;
  }
  if (handshake_.size() == kHandshakeHeaderBytes) handshake_.reserve(kHandshakeHeaderBytes + length);
  if (handshake_.size() == kHandshakeHeaderBytes + length) {
    answer_ = judge_server_hello(std::span(handshake_).subspan(kHandshakeHeaderBytes));
  }
}

// A warning alert (not close_notify) is skipped, as TLS 1.2 clients do;
// a fatal alert or close_notify is the server's answer.
void ServerHelloReader::on_alert() {
  const std::uint8_t level = alert_[0];
  const bool warning = level == tls::kAlertWarning && alert_[1] != tls::kAlertCloseNotify;
  if (level != tls::kAlertWarning && level != tls::kAlertFatal) {
    answer_ = ServerAnswer::not_tls;
  } else if (!warning) {
    answer_ = ServerAnswer::alert;
  } else if (++warnings_ > kHelloWarningsMax) {
    answer_ = ServerAnswer::not_tls;
  }
  alert_fill_ = 0;
}

// RFC 8446 §4.1.3 and RFC 5246 §7.4.1.3, as far as the ClientHello we sent
// constrains the answer.
ServerAnswer ServerHelloReader::judge_server_hello(std::span<const std::uint8_t> body) {
  Cursor cursor(body);
  const std::uint16_t legacy_version = cursor.u16();
  const auto random = cursor.take(32);
  const auto session_echo = cursor.take(cursor.u8());
  const std::uint16_t suite = cursor.u16();
  const std::uint8_t compression = cursor.u8();
  if (!cursor.ok() || legacy_version != tls::kVersionTls12 || session_echo.size() > 32 ||
      compression != 0 || !contains(tls::kOfferedSuites, suite)) {
    return ServerAnswer::not_tls;
  }
  hello_retry_ = std::equal(random.begin(), random.end(), tls::kHelloRetryRandom.begin());
  Extensions extensions;
  if (cursor.left() > 0) {  // absent extensions are legal in TLS 1.2 only
    Cursor list(cursor.take(cursor.u16()));
    if (!cursor.ok() || cursor.left() != 0) return ServerAnswer::not_tls;
    extensions = read_extensions(list, hello_retry_);
    if (!extensions.ok) return ServerAnswer::not_tls;
  }
  version_ = extensions.supported_versions ? tls::kVersionTls13 : tls::kVersionTls12;
  cipher_suite_ = suite;
  if (version_ == tls::kVersionTls12) {
    const bool downgrade = std::equal(kDowngradeTls12.begin(), kDowngradeTls12.end(),
                                      random.end() - kDowngradeTls12.size());
    const bool ok = !hello_retry_ && !is_tls13_suite(suite) && !extensions.key_share && !downgrade;
    return ok ? ServerAnswer::server_hello : ServerAnswer::not_tls;
  }
  const bool echo = std::equal(session_echo.begin(), session_echo.end(), session_id_.begin(),
                               session_id_.end());
  // Our hello shared no key: a TLS 1.3 answer to it is a HelloRetryRequest
  // naming an offered group (or none, when the server asks for a cookie
  // only); a ServerHello with a key share answers a share we never sent.
  const bool share = hello_retry_ && (!extensions.key_share ||
                                      contains(tls::kOfferedGroups, extensions.key_share_group));
  const bool ok = echo && is_tls13_suite(suite) && share;
  return ok ? ServerAnswer::server_hello : ServerAnswer::not_tls;
}

}  // namespace mesh::node
