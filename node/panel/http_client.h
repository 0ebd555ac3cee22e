// One HTTP(S) request from the daemon to a panel, a webhook receiver or the
// Telegram Bot API (docs/PANELS.md): Boost.Beast on the panel worker's
// io_context, never the agent's. Every step is bounded: one deadline for
// the whole exchange (resolve, connect, TLS, write, read), a response body
// of at most kHttpResponseBytesMax. HTTPS verifies the server's certificate
// against the system's CAs and its name; the daemon loads OpenSSL for it
// (node/api/tls_library.h) the first time an https:// URL is used.
// Asio stays in http_client.cc: this header is light.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"
#include "common/time.h"
#include "common/http_url.h"

namespace boost::asio {
class io_context;
}

namespace mesh::panel {

inline constexpr std::size_t kHttpResponseBytesMax = 16 * 1024 * 1024;

struct HttpRequest {
  std::string method = "GET";  // GET, POST, PUT
  std::string target;          // appended to the base path ("/api/hosts/")
  std::vector<std::pair<std::string, std::string>> headers;
  std::string content_type;    // with a body
  std::string body;
};

struct HttpResponse {
  unsigned status = 0;
  std::string body;
};

enum class HttpError {
  resolve,    // the name does not resolve
  connect,    // refused, unreachable
  tls,        // TLS failed, or OpenSSL cannot be loaded
  timeout,    // the exchange's deadline passed
  io,         // the connection broke mid-exchange
  too_large,  // the response is over kHttpResponseBytesMax
};
const char* to_string(HttpError error);

using HttpResult = Result<HttpResponse, HttpError>;

// Sends `request` to `url` and calls `done` once, on `io`'s thread, with the
// response (any status) or what failed. Cancelled by io.stop() (then
// `done` is not called).
void send_http(boost::asio::io_context& io, const HttpUrl& url, HttpRequest request, DurationMs timeout_ms,
               std::function<void(HttpResult)> done);

}  // namespace mesh::panel
