// meshctl's HTTP(S) client for a node's panel API (docs/API.md): one GET
// per call on a fresh connection, synchronous for the caller. No Beast or
// Asio type appears here, so commands that include this stay light.
//
// Bounds: resolve + connect within connect_timeout_ms; TLS handshake,
// request and the whole answer within request_timeout_ms; an answer body
// over body_bytes_max is refused. With https the server's certificate is
// verified against the system CAs (plus `cacert_file`) and its name or IP
// against the URL's host, unless `insecure`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/time.h"
#include "tools/meshctl/exit_codes.h"

namespace mesh::ctl {

inline constexpr DurationMs kApiConnectTimeoutMs = 5'000;
inline constexpr DurationMs kApiRequestTimeoutMs = 30'000;
inline constexpr std::size_t kApiBodyBytesMax = 16 * 1024 * 1024;

// An --api URL: http://host:port or https://host:port (IPv6 in brackets),
// without a path. The port defaults to 80 / 443.
struct ApiUrl {
  bool tls = false;
  std::string host;  // without brackets
  std::uint16_t port = 0;
  std::string base;  // scheme://host:port, without a trailing '/'
  bool loopback = false;  // localhost or a loopback address: the token stays on this machine
};
// unusable with a message saying what is wrong with `text`.
CtlResult<ApiUrl> parse_api_url(std::string_view text);

struct ApiClientOptions {
  ApiUrl url;
  std::string token;        // sent as "Authorization: Bearer <token>"
  std::string cacert_file;  // PEM: one more trusted CA (self-signed certificates); https only
  bool insecure = false;    // https without verifying the certificate
  DurationMs connect_timeout_ms = kApiConnectTimeoutMs;
  DurationMs request_timeout_ms = kApiRequestTimeoutMs;
  std::size_t body_bytes_max = kApiBodyBytesMax;
};

struct HttpAnswer {
  unsigned status = 0;
  std::string body;
};

// GET `target` ("/v1/servers?status=ok") from the node. Any HTTP status is
// an answer. Failures name the URL and the step: resolving, connecting
// (refused, timeout), TLS (a certificate that does not verify is
// check_failed; everything else is unusable), writing, reading (timeout,
// closed, over body_bytes_max).
CtlResult<HttpAnswer> http_get(const ApiClientOptions& options, const std::string& target);

// PUT `body` (application/octet-stream) to `target`; as http_get otherwise.
CtlResult<HttpAnswer> http_put(const ApiClientOptions& options, const std::string& target, std::string body);

}  // namespace mesh::ctl
