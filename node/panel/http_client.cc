// send_http (node/panel/http_client.h): one exchange as a chain of on_x
// handlers on the io_context's thread, shaped like Beast's
// http_client_async_ssl example; one timer bounds the whole of it.
#include "node/panel/http_client.h"

#include <openssl/ssl.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <mutex>
#include <type_traits>

#include "node/api/tls_library.h"

namespace mesh::panel {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using Tcp = asio::ip::tcp;
using ErrorCode = boost::system::error_code;
using PlainStream = beast::tcp_stream;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

// The client context: the system's CAs, the peer verified. Made once, after
// OpenSSL is loaded; nullptr when it cannot be.
ssl::context* client_context() {
  static std::once_flag once;
  static std::unique_ptr<ssl::context> context;
  std::call_once(once, [] {
    if (!api::load_tls_library()) return;
    auto made = std::make_unique<ssl::context>(ssl::context::tls_client);
    ErrorCode error;
    made->set_default_verify_paths(error);
    made->set_verify_mode(ssl::verify_peer, error);
    if (!error) context = std::move(made);
  });
  return context.get();
}

template <class Stream>
class Exchange : public std::enable_shared_from_this<Exchange<Stream>> {
 public:
  static constexpr bool kTls = std::is_same_v<Stream, TlsStream>;

  Exchange(asio::io_context& io, std::unique_ptr<Stream> stream, const HttpUrl& url, HttpRequest request,
           DurationMs timeout_ms, std::function<void(HttpResult)> done)
      : url_(url), resolver_(io), timer_(io), stream_(std::move(stream)), done_(std::move(done)),
        timeout_ms_(timeout_ms) {
    const http::verb verb = request.method == "POST" ? http::verb::post
                            : request.method == "PUT" ? http::verb::put
                                                      : http::verb::get;
    request_ = {verb, url.path + request.target, 11};
    const bool ipv6 = url.host.find(':') != std::string::npos;
    request_.set(http::field::host, (ipv6 ? "[" + url.host + "]" : url.host) + ":" + std::to_string(url.port));
    request_.set(http::field::user_agent, "meshnode");
    request_.set(http::field::accept, "application/json");
    request_.set(http::field::connection, "close");
    for (auto& [name, value] : request.headers) request_.set(name, value);
    if (!request.body.empty() || verb != http::verb::get) {
      if (!request.content_type.empty()) request_.set(http::field::content_type, request.content_type);
      request_.body() = std::move(request.body);
      request_.prepare_payload();
    }
    parser_.body_limit(kHttpResponseBytesMax);
    parser_.header_limit(64 * 1024);
  }

  void start() {
    timer_.expires_after(std::chrono::milliseconds(timeout_ms_));
    timer_.async_wait([self = this->shared_from_this()](const ErrorCode& error) {
      if (!error) self->on_deadline();
    });
    resolver_.async_resolve(url_.host, std::to_string(url_.port),
                            [self = this->shared_from_this()](const ErrorCode& error, Tcp::resolver::results_type r) {
                              self->on_resolve(error, std::move(r));
                            });
  }

 private:
  void on_deadline() {
    timed_out_ = true;
    resolver_.cancel();
    beast::get_lowest_layer(*stream_).cancel();
  }

  void finish(HttpResult result) {
    if (finished_) return;
    finished_ = true;
    timer_.cancel();
    ErrorCode ignored;
    beast::get_lowest_layer(*stream_).socket().close(ignored);
    done_(std::move(result));
  }

  void fail(HttpError error, const std::string& what) {
    finish(make_error(timed_out_ ? HttpError::timeout : error,
                      timed_out_ ? "no answer within " + std::to_string(timeout_ms_) + " ms (" + what + ")" : what));
  }

  void on_resolve(const ErrorCode& error, Tcp::resolver::results_type results) {
    if (error) return fail(HttpError::resolve, "resolving " + url_.host + ": " + error.message());
    beast::get_lowest_layer(*stream_).async_connect(
        results, [self = this->shared_from_this()](const ErrorCode& e, const Tcp::endpoint&) { self->on_connect(e); });
  }

  void on_connect(const ErrorCode& error) {
    if (error) return fail(HttpError::connect, "connecting to " + format_http_url(url_) + ": " + error.message());
    if constexpr (kTls) {
      ErrorCode ignored;
      asio::ip::make_address(url_.host, ignored);
      if (ignored) SSL_set_tlsext_host_name(stream_->native_handle(), url_.host.c_str());
      stream_->set_verify_callback(ssl::host_name_verification(url_.host));
      stream_->async_handshake(ssl::stream_base::client,
                               [self = this->shared_from_this()](const ErrorCode& e) { self->on_handshake(e); });
    } else {
      write();
    }
  }

  void on_handshake(const ErrorCode& error) {
    if (error) return fail(HttpError::tls, "TLS with " + url_.host + ": " + error.message());
    write();
  }

  void write() {
    http::async_write(*stream_, request_, [self = this->shared_from_this()](const ErrorCode& e, std::size_t) {
      self->on_write(e);
    });
  }

  void on_write(const ErrorCode& error) {
    if (error) return fail(HttpError::io, "sending the request: " + error.message());
    http::async_read(*stream_, buffer_, parser_, [self = this->shared_from_this()](const ErrorCode& e, std::size_t) {
      self->on_read(e);
    });
  }

  void on_read(const ErrorCode& error) {
    if (error == http::error::body_limit || error == http::error::header_limit) {
      return fail(HttpError::too_large, "the response is over " + std::to_string(kHttpResponseBytesMax) + " bytes");
    }
    if (error) return fail(HttpError::io, "reading the response: " + error.message());
    auto& message = parser_.get();
    finish(HttpResponse{message.result_int(), std::move(message.body())});
  }

  HttpUrl url_;
  Tcp::resolver resolver_;
  asio::steady_timer timer_;
  std::unique_ptr<Stream> stream_;
  std::function<void(HttpResult)> done_;
  DurationMs timeout_ms_;
  http::request<http::string_body> request_;
  http::response_parser<http::string_body> parser_;
  beast::flat_buffer buffer_;
  bool timed_out_ = false;
  bool finished_ = false;
};

}  // namespace

const char* to_string(HttpError error) {
  switch (error) {
    case HttpError::resolve: return "resolve";
    case HttpError::connect: return "connect";
    case HttpError::tls: return "tls";
    case HttpError::timeout: return "timeout";
    case HttpError::io: return "io";
    case HttpError::too_large: return "too_large";
  }
  return "?";
}

void send_http(asio::io_context& io, const HttpUrl& url, HttpRequest request, DurationMs timeout_ms,
               std::function<void(HttpResult)> done) {
  if (!url.tls) {
    std::make_shared<Exchange<PlainStream>>(io, std::make_unique<PlainStream>(io), url, std::move(request),
                                            timeout_ms, std::move(done))
        ->start();
    return;
  }
  ssl::context* context = client_context();
  if (context == nullptr) {
    done(make_error(HttpError::tls, "https:// needs OpenSSL 3 (libssl.so.3), which does not load"));
    return;
  }
  std::make_shared<Exchange<TlsStream>>(io, std::make_unique<TlsStream>(io, *context), url, std::move(request),
                                        timeout_ms, std::move(done))
      ->start();
}

}  // namespace mesh::panel
