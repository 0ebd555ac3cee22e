#include "node/probe_session.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sodium.h>
#include <sys/socket.h>

#include <string>
#include <utility>

#include <boost/asio/buffer.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/socket_base.hpp>
#include <boost/asio/write.hpp>

#include "node/agent/wire_cost.h"
#include "node/probe_failure.h"

namespace mesh::node {
namespace {

// SO_RCVBUF of a TLS probe's socket: the least Linux allows (it raises 1
// to SOCK_MIN_RCVBUF, 2304 bytes, about half of it window), so the server's
// first flight stops after about a kilobyte: room for the ServerHello (~100
// bytes; ~1.2 KB with a post-quantum key share, which then arrives in two
// windows).
constexpr int kTlsProbeReceiveBufferBytes = 1;

DurationMs elapsed_ms(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               since)
      .count();
}

// A fresh random and session id for one ClientHello.
ClientHelloSecrets draw_hello_secrets() {
  ClientHelloSecrets secrets;
  randombytes_buf(secrets.random.data(), secrets.random.size());
  randombytes_buf(secrets.session_id.data(), secrets.session_id.size());
  return secrets;
}

}  // namespace

ProbeSession::ProbeSession(ProbeStrand strand, const ProbeSettings& settings,
                           const agent::ProbeRequest& request, ProbeDone done)
    : strand_(std::move(strand)),
      settings_(settings),
      request_(request),
      done_(std::move(done)),
      resolver_(strand_),
      socket_(strand_),
      deadline_(strand_) {
  outcome_.probe_id = request.probe_id;
  outcome_.target = request.target;
  outcome_.tls = request.tls;
}

void ProbeSession::start() {
  stage_ = Stage::resolving;
  stage_start_ = Clock::now();
  arm_deadline(settings_.connect_timeout_ms);  // covers resolution and connect
  do_resolve();
}

void ProbeSession::cancel() {
  if (stage_ != Stage::finished) finish(deadline_failure());
}

void ProbeSession::arm_deadline(DurationMs timeout_ms) {
  deadline_.expires_after(std::chrono::milliseconds(timeout_ms));
  deadline_.async_wait([self = shared_from_this(), armed_for = stage_](
                           const boost::system::error_code& error) {
    if (!error) self->on_deadline(armed_for);
  });
}

void ProbeSession::on_deadline(Stage armed_for) {
  // A wait re-armed for the next stage may still deliver the old expiry.
  const bool same_stage = armed_for == stage_ ||
                          (armed_for == Stage::resolving && stage_ == Stage::connecting);
  if (stage_ != Stage::finished && same_stage) finish(deadline_failure());
}

// A name that does not resolve in time is unreachable, like one that does
// not resolve at all.
ProbeFailure ProbeSession::deadline_failure() const {
  switch (stage_) {
    case Stage::resolving:
      return ProbeFailure::tcp_unreachable;
    case Stage::handshaking:
      return ProbeFailure::tls_timeout;
    case Stage::connecting:
    case Stage::finished:
      break;
  }
  return ProbeFailure::tcp_timeout;
}

void ProbeSession::do_resolve() {
  boost::system::error_code parse_error;
  const auto literal = boost::asio::ip::make_address(request_.address.host, parse_error);
  if (!parse_error) {
    do_connect(tcp::endpoint(literal, request_.address.port));
    return;
  }
  resolver_.async_resolve(request_.address.host, std::to_string(request_.address.port),
                          tcp::resolver::numeric_service,
                          [self = shared_from_this()](const boost::system::error_code& error,
                                                      tcp::resolver::results_type results) {
                            self->on_resolve(error, std::move(results));
                          });
}

// Connects to the first address of the answer, of the source address's
// family when one is set (one attempt per probe; no Happy Eyeballs).
void ProbeSession::on_resolve(const boost::system::error_code& error,
                              tcp::resolver::results_type results) {
  if (stage_ == Stage::finished) return;
  if (error || results.empty()) {
    finish(ProbeFailure::tcp_unreachable);  // a name that does not resolve: no path to it
    return;
  }
  tcp::endpoint chosen = results.begin()->endpoint();
  if (!settings_.source_address.empty()) {
    boost::system::error_code ignored;
    const bool want_v6 = boost::asio::ip::make_address(settings_.source_address, ignored).is_v6();
    for (const auto& entry : results) {
      if (entry.endpoint().address().is_v6() == want_v6) {
        chosen = entry.endpoint();
        break;
      }
    }
  }
  do_connect(chosen);
}

void ProbeSession::do_connect(const tcp::endpoint& endpoint) {
  stage_ = Stage::connecting;
  if (!prepare_socket(endpoint)) {
    finish(ProbeFailure::tcp_unreachable);
    return;
  }
  stage_start_ = Clock::now();
  connect_attempted_ = true;
  socket_.async_connect(
      endpoint, [self = shared_from_this()](const boost::system::error_code& error) {
        self->on_connect(error);
      });
}

// Opens the socket and binds it to the source address when one is set. A
// TLS probe reads only up to the ServerHello, so its receive buffer is made
// small before the SYN sets the window: the server then holds back the
// rest of its flight (its certificate chain, 1–10 KB) instead of sending
// what the probe throws away.
//
// Every probe's socket delays its ACKs from the start (TCP_QUICKACK off:
// Linux's "pingpong" mode, in which the handshake's last ACK waits for data
// to ride on): a bare connect then closes with its RST before any ACK (3
// packets instead of 4, 214 B instead of 280), and a TLS probe's
// ClientHello carries it. Best effort: without it the ACKs go out.
bool ProbeSession::prepare_socket(const tcp::endpoint& endpoint) {
  boost::system::error_code error;
  socket_.open(endpoint.protocol(), error);
  if (!error) delay_acks();
  if (!error && request_.tls) {
    const int bytes = kTlsProbeReceiveBufferBytes;
    ::setsockopt(socket_.native_handle(), SOL_SOCKET, SO_RCVBUF, &bytes, sizeof bytes);
  }
  if (error || settings_.source_address.empty()) return !error;
  const auto source = boost::asio::ip::make_address(settings_.source_address, error);
  if (error) return false;
  // Linux: take the ephemeral port at connect() rather than at bind(), so
  // that many probes bound to one source address do not exhaust ports.
  // Best effort: without it bind() picks the port.
  const int enable = 1;
  ::setsockopt(socket_.native_handle(), IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &enable,
               sizeof enable);
  socket_.bind(tcp::endpoint(source, 0), error);
  return !error;
}

void ProbeSession::on_connect(const boost::system::error_code& error) {
  if (stage_ == Stage::finished) return;
  if (error) {
    finish(classify_connect_error(error));
    return;
  }
  outcome_.connect_ms = elapsed_ms(stage_start_);
  if (!request_.tls) {
    finish(ProbeFailure::none);
    return;
  }
  // The SYN-ACK turned quick ACKs back on: off again, so that the
  // server's answer, read at once, is not ACKed before the RST.
  delay_acks();
  do_handshake();
}

void ProbeSession::delay_acks() {
  const int off = 0;
  ::setsockopt(socket_.native_handle(), IPPROTO_TCP, TCP_QUICKACK, &off, sizeof off);
}

// The ServerHello (or a HelloRetryRequest, which is one too) is the
// server's answer to the ClientHello a user's app sends: a censor that
// filters by SNI acts on the ClientHello, with a reset, a drop or an alert,
// before any ServerHello. So the probe ends there, as a success, and
// closes with RST: the rest of the handshake (the certificate chain, the
// client's Finished) costs bytes and tells nothing more about the path.
void ProbeSession::do_handshake() {
  stage_ = Stage::handshaking;
  stage_start_ = Clock::now();
  arm_deadline(settings_.tls_timeout_ms);
  const ClientHelloSecrets secrets = draw_hello_secrets();
  hello_ = client_hello(request_.sni, secrets);
  reader_.emplace(secrets.session_id);
  boost::asio::async_write(socket_, boost::asio::buffer(hello_),
                           [self = shared_from_this()](const boost::system::error_code& error,
                                                       std::size_t bytes) {
                             self->on_hello_written(error, bytes);
                           });
}

void ProbeSession::on_hello_written(const boost::system::error_code& error, std::size_t bytes) {
  if (stage_ == Stage::finished) return;
  tls_sent_ += bytes;
  if (error) {
    finish(classify_handshake_error(error));
    return;
  }
  do_read();
}

void ProbeSession::do_read() {
  socket_.async_read_some(boost::asio::buffer(chunk_),
                          [self = shared_from_this()](const boost::system::error_code& error,
                                                      std::size_t bytes) {
                            self->on_read(error, bytes);
                          });
}

// Bytes that decide the answer decide it even when the connection broke
// right after them (a server that sends an alert and resets).
void ProbeSession::on_read(const boost::system::error_code& error, std::size_t bytes) {
  if (stage_ == Stage::finished) return;
  tls_received_ += bytes;
  switch (reader_->feed(std::span(chunk_).first(bytes))) {
    case ServerAnswer::server_hello:
      outcome_.handshake_ms = elapsed_ms(stage_start_);
      finish(ProbeFailure::none);
      return;
    case ServerAnswer::alert:
      finish(ProbeFailure::tls_alert);
      return;
    case ServerAnswer::not_tls:
      finish(ProbeFailure::tls_bad_peer);
      return;
    case ServerAnswer::incomplete:
      break;
  }
  if (error) {
    finish(classify_handshake_error(error));
    return;
  }
  do_read();
}

std::uint64_t ProbeSession::wire_bytes(ProbeFailure failure) {
  switch (stage_) {
    case Stage::resolving:
    case Stage::finished:
      return 0;  // nothing left this host for the target (DNS traffic is not counted)
    case Stage::connecting:
      if (failure == ProbeFailure::none) return agent::tcp_connect_probe_wire_bytes();
      if (failure == ProbeFailure::tcp_refused) return agent::tcp_refused_wire_bytes();
      return connect_attempted_ ? agent::tcp_unanswered_wire_bytes(elapsed_ms(stage_start_)) : 0;
    case Stage::handshaking:
      return agent::tls_probe_wire_bytes(tls_sent_, tls_received_);
  }
  return 0;
}

// SO_LINGER {on, 0}: close() sends RST, no FIN exchange, no TIME_WAIT; and
// no close_notify after TLS. The cheapest close on the wire.
void ProbeSession::close_abortively() {
  boost::system::error_code ignored;
  if (socket_.is_open()) socket_.set_option(boost::asio::socket_base::linger(true, 0), ignored);
  socket_.close(ignored);
}

void ProbeSession::finish(ProbeFailure failure) {
  outcome_.failure = failure;
  outcome_.wire_bytes = wire_bytes(failure);
  stage_ = Stage::finished;
  deadline_.cancel();
  resolver_.cancel();
  close_abortively();
  auto done = std::move(done_);
  done(std::move(outcome_));
}

}  // namespace mesh::node
