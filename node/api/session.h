// Internal to node/api/server.cc: one HTTP connection, plain or TLS (the
// Boost.Beast advanced_server_flex shape: one session class over both
// streams via CRTP, one strand per connection, deadlines on the stream).
// Each request is read whole within its deadline and under the header and
// body limits, routed against the latest snapshot, and answered; a held
// long-poll waits on a timer that notify() cancels.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <sys/sendfile.h>

#include <cerrno>
#include <memory>
#include <optional>
#include <sstream>

#include "node/api/admission.h"
#include "node/api/limits.h"
#include "node/api/router.h"
#include "node/api/server.h"

namespace mesh::api {

namespace beast = boost::beast;
namespace http = boost::beast::http;
using Tcp = boost::asio::ip::tcp;

// What the server knows of a session: a way to wake a held request and to
// close the connection, from any thread.
class SessionHandle {
 public:
  virtual ~SessionHandle() = default;
  virtual void wake() = 0;
  virtual void close() = 0;
};

// Server state shared with the sessions (defined in server.cc).
struct ServerCore;
void count_request(ServerCore& core, bool rejected);
void register_waiter(ServerCore& core, std::weak_ptr<SessionHandle> session);
void register_session(ServerCore& core, ConnectionId id, std::weak_ptr<SessionHandle> session);
// The admission table's events (node/api/admission.h).
void session_trusted(ServerCore& core, ConnectionId id);
void session_waiting(ServerCore& core, ConnectionId id);
void session_closed(ServerCore& core, ConnectionId id);
bool presents_valid_token(const ServerCore& core, std::string_view authorization);
ApiServerStats server_stats(const ServerCore& core);
const ApiLimits& server_limits(const ServerCore& core);
std::shared_ptr<const ApiSnapshot> latest_snapshot(const ServerCore& core);
std::shared_ptr<const TokenSet> server_tokens(const ServerCore& core);
void offer_roster(ServerCore& core, std::string raw, std::function<void(ApiResponse)> reply);

template <class Derived>
class HttpSession : public SessionHandle {
 public:
  HttpSession(std::shared_ptr<ServerCore> core, ConnectionId id, boost::asio::any_io_executor executor)
      : core_(std::move(core)), id_(id), wait_timer_(executor), send_timer_(executor) {}
  ~HttpSession() override { session_closed(*core_, id_); }

  void wake() override {
    boost::asio::post(derived().executor(), [self = derived().shared_from_this()] {
      self->wait_timer_.cancel();
    });
  }
  void close() override {
    boost::asio::post(derived().executor(), [self = derived().shared_from_this()] {
      self->closing_ = true;
      self->wait_timer_.cancel();
      beast::get_lowest_layer(self->derived().stream()).close();
    });
  }

 protected:
  Derived& derived() { return static_cast<Derived&>(*this); }

  // The header first, under the request's deadline; then, for a request
  // that may carry one, the body under the same deadline.
  void do_read() {
    if (closing_) return;
    // Its wait for this request orders evictions (node/api/admission.h).
    if (!trusted_ && served_ > 0) session_waiting(*core_, id_);
    parser_.emplace();
    parser_->header_limit(kHeaderBytesMax);
    parser_->body_limit(kBodyBytesMax);
    beast::get_lowest_layer(derived().stream())
        .expires_after(std::chrono::milliseconds(served_ == 0 ? server_limits(*core_).first_request_ms
                                                              : server_limits(*core_).keep_alive_request_ms));
    http::async_read_header(derived().stream(), buffer_, *parser_,
                            [self = derived().shared_from_this()](beast::error_code error, std::size_t) {
                              self->on_header(error);
                            });
  }

  void on_header(beast::error_code error) {
    if (error) return on_read(error);
    // A connection that presents a valid token is never closed to make
    // room for another (docs/API.md, "Under a connection flood").
    const auto authorization = parser_->get()[http::field::authorization];
    if (!trusted_ && presents_valid_token(*core_, std::string_view(authorization.data(), authorization.size()))) {
      trusted_ = true;
      session_trusted(*core_, id_);
    }
    // Only PUT /v1/roster takes a body (docs/API.md, "Limits": 0 for any
    // other request): refused before a byte of it is read.
    const bool has_body = parser_->chunked() || parser_->content_length().value_or(0) > 0;
    if (has_body && parser_->get().method() != http::verb::put) {
      return reject(413, "too_large", "a " + std::string(parser_->get().method_string()) + " request takes no body");
    }
    if (parser_->is_done()) return on_read({});
    http::async_read(derived().stream(), buffer_, *parser_,
                     [self = derived().shared_from_this()](beast::error_code error, std::size_t) {
                       self->on_read(error);
                     });
  }

  void on_read(beast::error_code error) {
    if (error == http::error::end_of_stream) return derived().do_eof();
    if (error == http::error::header_limit) return reject(431, "too_large", "request headers over 8 KiB");
    if (error == http::error::body_limit) return reject(413, "too_large", "request body over the limit");
    if (error && &error.category() == &http::make_error_code(http::error::bad_target).category()) {
      return reject(400, "bad_request", "not an HTTP/1.1 request");
    }
    if (error) {
      count_request(*core_, true);  // a timeout, a reset: nothing to answer
      return;
    }
    const auto& message = parser_->get();
    request_ = ApiRequest{std::string(message.method_string()), std::string(message.target()),
                          std::string(message[http::field::authorization]), message.body(),
                          message.count(http::field::authorization) > 1};
    keep_alive_ = message.keep_alive();
    version_ = message.version();
    count_request(*core_, false);
    handle(false);
  }

  void handle(bool held) {
    auto snapshot = latest_snapshot(*core_);
    if (snapshot == nullptr) {
      return write(error_response(503, "starting", "the node has not published its state yet"));
    }
    const auto tokens = server_tokens(*core_);
    // The server's counters go only into /metrics: read (under the lock)
    // for it alone.
    const ApiServerStats stats = request_.target.starts_with("/metrics") ? server_stats(*core_) : ApiServerStats{};
    RouteDecision decision = route(request_, *snapshot, *tokens, held, stats);
    switch (decision.kind) {
      case RouteDecision::Kind::respond: return write(std::move(decision.response));
      case RouteDecision::Kind::wait: return hold(decision.index, decision.wait_ms);
      case RouteDecision::Kind::offer_roster:
        return offer_roster(*core_, std::move(decision.roster),
                            [self = derived().shared_from_this()](ApiResponse response) {
                              boost::asio::post(self->derived().executor(), [self, response]() mutable {
                                self->write(std::move(response));
                              });
                            });
    }
  }

  // A long-poll: until notify() wakes it or the wait ends, then answer.
  void hold(std::uint64_t index, DurationMs wait_ms) {
    beast::get_lowest_layer(derived().stream()).expires_never();
    wait_timer_.expires_after(std::chrono::milliseconds(wait_ms));
    register_waiter(*core_, derived().weak_from_this());
    wait_timer_.async_wait([self = derived().shared_from_this()](beast::error_code) {
      if (self->closing_) return;
      self->handle(true);
    });
    // The index may have moved between routing and registering.
    if (auto snapshot = latest_snapshot(*core_); snapshot && snapshot->index != index) {
      wait_timer_.cancel();
    }
  }

  // An error answer, then close; what the client still sends is read and
  // dropped for a moment first (a lingering close, as nginx's), so that the
  // close does not reset the connection before the answer is read.
  void reject(unsigned status, std::string_view code, std::string_view message) {
    count_request(*core_, true);
    keep_alive_ = false;
    linger_ = true;
    write(error_response(status, code, message));
  }

  void write(ApiResponse response) {
    ++served_;
    const bool keep = keep_alive_ && served_ < kRequestsPerConnectionMax && !closing_;
    const auto status = static_cast<http::status>(response.status);
    const unsigned version = version_ == 10 ? 10 : 11;
    if (response.shared_body && response.shared_body->fd() >= 0 && Derived::kSendfile) {
      // A rendering shared with other responses, from its memfd: the
      // header as Beast writes it, then the body by sendfile(2).
      http::response<http::empty_body> head(status, version);
      fill(head, response, keep);
      head.content_length(response.shared_body->text().size());
      std::ostringstream header;
      header << head.base();
      return send_head_then_file(std::make_shared<const std::string>(header.str()),
                                 std::move(response.shared_body), keep);
    }
    if (response.shared_body) {
      // A rendering shared with other responses: sent from where it lies.
      auto out = std::make_shared<http::response<http::span_body<const char>>>(status, version);
      fill(*out, response, keep);
      out->body() = {response.shared_body->text().data(), response.shared_body->text().size()};
      out->prepare_payload();
      return send(std::move(out), std::move(response.shared_body), keep);
    }
    auto out = std::make_shared<http::response<http::string_body>>(status, version);
    fill(*out, response, keep);
    out->body() = std::move(response.body);
    out->prepare_payload();
    send(std::move(out), nullptr, keep);
  }

  template <class Message>
  static void fill(Message& out, const ApiResponse& response, bool keep) {
    out.set(http::field::server, "meshnode");
    out.set(http::field::content_type, response.content_type);
    out.set(http::field::cache_control, "no-store");
    out.set("X-Content-Type-Options", "nosniff");
    for (const auto& [name, value] : response.headers) out.set(name, value);
    out.keep_alive(keep);
  }

  template <class Message>
  void send(std::shared_ptr<Message> out, std::shared_ptr<const SharedBody> shared_body, bool keep) {
    beast::get_lowest_layer(derived().stream())
        .expires_after(std::chrono::milliseconds(server_limits(*core_).write_ms));
    http::async_write(derived().stream(), *out,
                      [self = derived().shared_from_this(), out, shared_body, keep](beast::error_code error,
                                                                                     std::size_t) {
                        if (error) return;
                        if (!keep) return self->derived().do_eof();
                        self->do_read();
                      });
  }

  void send_head_then_file(std::shared_ptr<const std::string> header, std::shared_ptr<const SharedBody> body,
                           bool keep) {
    // The body's deadline: the write limit, on a timer of its own (sendfile
    // bypasses the stream's).
    send_timer_.expires_after(std::chrono::milliseconds(server_limits(*core_).write_ms));
    send_timer_.async_wait([weak = derived().weak_from_this()](beast::error_code timer_error) {
      auto held = weak.lock();
      if (timer_error || !held) return;
      // An abortive close (RST): what the client did not read is dropped
      // from this host's buffers at once instead of trickling out.
      beast::error_code ignored;
      auto& socket = beast::get_lowest_layer(held->stream()).socket();
      socket.set_option(boost::asio::socket_base::linger(true, 0), ignored);
      socket.close(ignored);
    });
    // The header with MSG_MORE, so that it leaves in one segment with the
    // body's start (nginx's tcp_nopush) instead of a small one of its own.
    const int more = body->text().empty() ? 0 : MSG_MORE;
    auto& socket = beast::get_lowest_layer(derived().stream()).socket();
    beast::error_code error = make_non_blocking(socket);
    ssize_t sent = -1;
    do {
      sent = ::send(socket.native_handle(), header->data(), header->size(), more | MSG_NOSIGNAL);
    } while (!error && sent < 0 && errno == EINTR);
    if (!error && sent == static_cast<ssize_t>(header->size())) return send_file(std::move(body), 0, keep);
    if (error || (sent < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
      send_timer_.cancel();
      return socket.close(error);
    }
    // A full socket buffer: the rest of the header first, then the body.
    const std::size_t done = sent > 0 ? static_cast<std::size_t>(sent) : 0;
    boost::asio::async_write(socket, boost::asio::buffer(header->data() + done, header->size() - done),
                             [self = derived().shared_from_this(), header, body, keep](beast::error_code write_error,
                                                                                       std::size_t) {
                               if (write_error) {
                                 self->send_timer_.cancel();
                                 return;
                               }
                               self->send_file(body, 0, keep);
                             });
  }

  // The socket's own O_NONBLOCK, once per connection (an ioctl each time
  // otherwise), for the system calls made here beside Asio's.
  beast::error_code make_non_blocking(Tcp::socket& socket) {
    beast::error_code error;
    if (!non_blocking_) socket.native_non_blocking(true, error);
    non_blocking_ = !error;
    return error;
  }

  // sendfile(2) from `offset` until the body is sent or the socket would
  // block (then waits until it can write again).
  void send_file(std::shared_ptr<const SharedBody> body, off_t offset, bool keep) {
    auto& socket = beast::get_lowest_layer(derived().stream()).socket();
    beast::error_code error = make_non_blocking(socket);
    const auto size = static_cast<off_t>(body->text().size());
    while (!error && offset < size) {
      const ssize_t sent = ::sendfile(socket.native_handle(), body->fd(), &offset,
                                      static_cast<std::size_t>(size - offset));
      if (sent > 0 || (sent < 0 && errno == EINTR)) continue;  // sendfile moved `offset` itself
      if (sent == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) break;
      return socket.async_wait(Tcp::socket::wait_write,
                               [self = derived().shared_from_this(), body, offset, keep](beast::error_code wait_error) {
                                 if (wait_error) return;
                                 self->send_file(body, offset, keep);
                               });
    }
    send_timer_.cancel();
    if (error || offset < size) {
      socket.close(error);
      return;
    }
    if (!keep) return derived().do_eof();
    do_read();
  }

  std::shared_ptr<ServerCore> core_;
  const ConnectionId id_;  // in the admission table
  bool trusted_ = false;   // it presented a valid token
  boost::asio::steady_timer wait_timer_;
  boost::asio::steady_timer send_timer_;  // the deadline of a body sent by sendfile
  bool non_blocking_ = false;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  ApiRequest request_;
  bool keep_alive_ = true;
  unsigned version_ = 11;
  std::size_t served_ = 0;
  bool closing_ = false;
  bool linger_ = false;  // rejected with input unread: drain it before closing
};

class PlainSession final : public HttpSession<PlainSession>,
                           public std::enable_shared_from_this<PlainSession> {
 public:
  PlainSession(std::shared_ptr<ServerCore> core, ConnectionId id, Tcp::socket socket)
      : HttpSession(std::move(core), id, socket.get_executor()), stream_(std::move(socket)) {}
  void run() {
    boost::asio::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->do_read(); });
  }
  static constexpr bool kSendfile = true;  // the socket carries the body as it is
  beast::tcp_stream& stream() { return stream_; }
  boost::asio::any_io_executor executor() { return stream_.get_executor(); }
  void do_eof() {
    beast::error_code ignored;
    stream_.socket().shutdown(Tcp::socket::shutdown_send, ignored);
    if (linger_) drain(0);
  }

 private:
  // Reads and drops what the client still sends, until it closes, for at
  // most kLingerMs and kLingerBytesMax.
  void drain(std::size_t drained) {
    if (drained == 0) stream_.expires_after(std::chrono::milliseconds(kLingerMs));
    buffer_.clear();
    stream_.async_read_some(buffer_.prepare(kLingerChunkBytes),
                            [self = shared_from_this(), drained](beast::error_code error, std::size_t bytes) {
                              if (error || drained + bytes > kLingerBytesMax) return;
                              self->drain(drained + bytes);
                            });
  }

  beast::tcp_stream stream_;
};

class TlsSession final : public HttpSession<TlsSession>, public std::enable_shared_from_this<TlsSession> {
 public:
  TlsSession(std::shared_ptr<ServerCore> core, ConnectionId id, Tcp::socket socket, boost::asio::ssl::context& tls)
      : HttpSession(std::move(core), id, socket.get_executor()), stream_(std::move(socket), tls) {}
  void run() {
    boost::asio::dispatch(stream_.get_executor(), [self = shared_from_this()] {
      beast::get_lowest_layer(self->stream_).expires_after(std::chrono::milliseconds(kTlsHandshakeMs));
      self->stream_.async_handshake(boost::asio::ssl::stream_base::server,
                                    [self](beast::error_code error) {
                                      if (error) return count_request(*self->core_, true);
                                      self->do_read();
                                    });
    });
  }
  static constexpr bool kSendfile = false;  // the body must go through TLS
  beast::ssl_stream<beast::tcp_stream>& stream() { return stream_; }
  boost::asio::any_io_executor executor() { return stream_.get_executor(); }
  void do_eof() {
    beast::get_lowest_layer(stream_).expires_after(std::chrono::milliseconds(kWriteMs));
    stream_.async_shutdown([self = shared_from_this()](beast::error_code) {});
  }

 private:
  beast::ssl_stream<beast::tcp_stream> stream_;
};

}  // namespace mesh::api
