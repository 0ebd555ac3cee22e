// One GET over Boost.Beast, driven on a private io_context so that the
// stream's deadlines (expires_after) bound every step: Beast's blocking
// calls take no timeout, its asynchronous ones do. The caller still sees
// one blocking call. Shaped like Beast's http_client_async_ssl example:
// on_x handlers in order, the first failure ends the exchange.
#include "tools/meshctl/api_client.h"

#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <chrono>
#include <optional>
#include <type_traits>

#include "common/http_url.h"

namespace mesh::ctl {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using Tcp = asio::ip::tcp;
using ErrorCode = boost::system::error_code;
using Clock = std::chrono::steady_clock;
using PlainStream = beast::tcp_stream;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

bool is_ip_literal(const std::string& host) {
  ErrorCode error;
  (void)asio::ip::make_address(host, error);
  return !error;
}

std::string seconds(DurationMs ms) { return std::to_string(ms / 1000) + " s"; }

// Why the TLS handshake failed, from the certificate check when it ran.
std::string handshake_failure(SSL* ssl, const ErrorCode& error, bool& verification) {
  const long verify = SSL_get_verify_result(ssl);
  verification = verify != X509_V_OK;
  if (verification) {
    return std::string("TLS verification failed: ") + X509_verify_cert_error_string(verify) +
           " (--cacert FILE trusts a self-signed certificate)";
  }
  const std::string why = error.message();
  const bool plain = why.find("wrong version number") != std::string::npos;
  return "TLS handshake failed: " + why + (plain ? " (is the API plain http://?)" : "");
}

template <class Stream>
class Exchange {
 public:
  static constexpr bool kTls = std::is_same_v<Stream, TlsStream>;

  Exchange(asio::io_context& io, Stream& stream, const ApiClientOptions& options, http::verb verb,
           const std::string& target, std::string body)
      : options_(options), url_(options.url.base + target), resolver_(io), resolve_timer_(io),
        stream_(stream) {
    request_ = {verb, target, 11};
    if (verb != http::verb::get) {
      request_.set(http::field::content_type, "application/octet-stream");
      request_.body() = std::move(body);
    }
    const bool ipv6 = options.url.host.find(':') != std::string::npos;
    request_.set(http::field::host, (ipv6 ? "[" + options.url.host + "]" : options.url.host) + ":" +
                                        std::to_string(options.url.port));
    request_.set(http::field::user_agent, "meshctl");
    request_.set(http::field::accept, "application/json");
    request_.set(http::field::authorization, "Bearer " + options.token);
    request_.set(http::field::connection, "close");
    request_.prepare_payload();
    parser_.body_limit(options.body_bytes_max);
  }

  void start() {
    connect_deadline_ = Clock::now() + std::chrono::milliseconds(options_.connect_timeout_ms);
    resolve_timer_.expires_at(connect_deadline_);
    resolve_timer_.async_wait([this](const ErrorCode& error) {
      if (!error) resolver_.cancel();  // resolving took the whole connect time
    });
    resolver_.async_resolve(options_.url.host, std::to_string(options_.url.port),
                            [this](const ErrorCode& error, Tcp::resolver::results_type results) {
                              on_resolve(error, std::move(results));
                            });
  }

  CtlResult<HttpAnswer> result() {
    if (failure_) return *failure_;
    if (!answered_) return unusable(url_ + ": no answer");  // unreachable: run() ended early
    return HttpAnswer{parser_.get().result_int(), std::move(parser_.get().body())};
  }

 private:
  beast::tcp_stream& lowest() { return beast::get_lowest_layer(stream_); }

  void fail(Failure failure, const std::string& what) {
    if (!failure_) failure_ = make_error(failure, url_ + ": " + what);
    ErrorCode ignored;
    lowest().socket().close(ignored);
  }

  void on_resolve(const ErrorCode& error, Tcp::resolver::results_type results) {
    const bool timed_out = Clock::now() >= connect_deadline_;
    resolve_timer_.cancel();
    if (error) {
      fail(Failure::unusable, timed_out ? "cannot resolve '" + options_.url.host + "' within " +
                                              seconds(options_.connect_timeout_ms)
                                        : "cannot resolve '" + options_.url.host + "': " + error.message());
      return;
    }
    lowest().expires_at(connect_deadline_);
    lowest().async_connect(results, [this](const ErrorCode& e, const Tcp::endpoint&) { on_connect(e); });
  }

  void on_connect(const ErrorCode& error) {
    if (error == beast::error::timeout) {
      fail(Failure::unusable, "no connection within " + seconds(options_.connect_timeout_ms));
      return;
    }
    if (error == asio::error::connection_refused) {
      fail(Failure::unusable, "connection refused (is meshnode's API listening there?)");
      return;
    }
    if (error) {
      fail(Failure::unusable, "cannot connect: " + error.message());
      return;
    }
    lowest().expires_after(std::chrono::milliseconds(options_.request_timeout_ms));
    if constexpr (kTls) {
      do_handshake();
    } else {
      do_write();
    }
  }

  void do_handshake() {
    SSL* ssl = stream_.native_handle();
    if (is_ip_literal(options_.url.host)) {
      // An IP literal is checked against the certificate's IP addresses; it takes no SNI.
      X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), options_.url.host.c_str());
    } else {
      SSL_set_tlsext_host_name(ssl, options_.url.host.c_str());
      SSL_set1_host(ssl, options_.url.host.c_str());
    }
    stream_.async_handshake(ssl::stream_base::client, [this](const ErrorCode& e) { on_handshake(e); });
  }

  void on_handshake(const ErrorCode& error) {
    if (error == beast::error::timeout) {
      fail(Failure::unusable, "no TLS handshake within " + seconds(options_.request_timeout_ms));
      return;
    }
    if (error) {
      bool verification = false;
      const std::string why = handshake_failure(stream_.native_handle(), error, verification);
      fail(verification ? Failure::check_failed : Failure::unusable, why);
      return;
    }
    do_write();
  }

  void do_write() {
    http::async_write(stream_, request_, [this](const ErrorCode& e, std::size_t) { on_write(e); });
  }

  void on_write(const ErrorCode& error) {
    if (error) {
      fail(Failure::unusable, error == beast::error::timeout
                                  ? "the request was not sent within " + seconds(options_.request_timeout_ms)
                                  : "cannot send the request: " + error.message());
      return;
    }
    // The header alone first: with Boost 1.74's eager parse (async_read), a
    // Content-Length over body_limit is forgotten when body bytes arrive with
    // the header, and the whole body would be read.
    http::async_read_header(stream_, buffer_, parser_,
                            [this](const ErrorCode& e, std::size_t) { on_read_header(e); });
  }

  void on_read_header(const ErrorCode& error) {
    if (error || parser_.is_done()) {
      on_read(error);
    } else if (const auto length = parser_.content_length(); length && *length > options_.body_bytes_max) {
      on_read(http::error::body_limit);
    } else {
      http::async_read(stream_, buffer_, parser_, [this](const ErrorCode& e, std::size_t) { on_read(e); });
    }
  }

  void on_read(const ErrorCode& error) {
    if (error == http::error::body_limit) {
      fail(Failure::unusable, "the answer is over " + std::to_string(options_.body_bytes_max) + " bytes");
    } else if (error == beast::error::timeout) {
      fail(Failure::unusable, "no complete answer within " + seconds(options_.request_timeout_ms));
    } else if (error == http::error::end_of_stream || error == asio::error::eof ||
               error == asio::error::connection_reset) {
      fail(Failure::unusable, std::string("the connection closed before an answer") +
                                  (kTls ? "" : " (is the API https://?)"));
    } else if (error) {
      fail(Failure::unusable, "cannot read the answer: " + error.message());
    } else {
      answered_ = true;
      ErrorCode ignored;
      lowest().socket().shutdown(Tcp::socket::shutdown_both, ignored);
      lowest().close();
    }
  }

  const ApiClientOptions& options_;
  const std::string url_;
  Tcp::resolver resolver_;
  asio::steady_timer resolve_timer_;
  Stream& stream_;
  Clock::time_point connect_deadline_;
  http::request<http::string_body> request_;
  beast::flat_buffer buffer_;
  http::response_parser<http::string_body> parser_;
  std::optional<Error<Failure>> failure_;
  bool answered_ = false;
};

CtlResult<ssl::context> tls_context(const ApiClientOptions& options) {
  ssl::context context(ssl::context::tls_client);
  SSL_CTX_set_min_proto_version(context.native_handle(), TLS1_2_VERSION);
  ErrorCode error;
  if (options.insecure) {
    context.set_verify_mode(ssl::verify_none);
    return context;
  }
  context.set_default_verify_paths(error);
  if (error) return unusable("cannot load the system's CA certificates: " + error.message());
  if (!options.cacert_file.empty()) {
    context.load_verify_file(options.cacert_file, error);
    if (error) return unusable("--cacert '" + options.cacert_file + "': not a PEM certificate file (" +
                               error.message() + ")");
  }
  context.set_verify_mode(ssl::verify_peer);
  return context;
}

template <class Stream>
CtlResult<HttpAnswer> run(asio::io_context& io, Stream& stream, const ApiClientOptions& options, http::verb verb,
                          const std::string& target, std::string body) {
  Exchange<Stream> exchange(io, stream, options, verb, target, std::move(body));
  exchange.start();
  io.run();
  return exchange.result();
}

}  // namespace

CtlResult<ApiUrl> parse_api_url(std::string_view text) {
  const std::string quoted = "--api '" + std::string(text) + "': ";
  auto parsed = parse_http_url(text);
  if (!parsed) return unusable(quoted + parsed.message());
  if (!parsed->path.empty()) return unusable(quoted + "give the node's address only, without a path, query or user");
  ApiUrl url;
  url.tls = parsed->tls;
  url.host = parsed->host;
  url.port = parsed->port;
  ErrorCode not_ip;
  const auto address = asio::ip::make_address(url.host, not_ip);
  url.loopback = url.host == "localhost" || (!not_ip && address.is_loopback());
  url.base = format_http_url(*parsed);
  return url;
}

namespace {

CtlResult<HttpAnswer> exchange(const ApiClientOptions& options, http::verb verb, const std::string& target,
                               std::string body) {
  asio::io_context io;
  if (!options.url.tls) {
    PlainStream stream(io);
    return run(io, stream, options, verb, target, std::move(body));
  }
  auto context = tls_context(options);
  if (!context) return context.error();
  TlsStream stream(io, *context);
  return run(io, stream, options, verb, target, std::move(body));
}

}  // namespace

CtlResult<HttpAnswer> http_get(const ApiClientOptions& options, const std::string& target) {
  return exchange(options, http::verb::get, target, "");
}

CtlResult<HttpAnswer> http_put(const ApiClientOptions& options, const std::string& target, std::string body) {
  return exchange(options, http::verb::put, target, std::move(body));
}

}  // namespace mesh::ctl
