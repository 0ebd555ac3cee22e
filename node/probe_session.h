// One probe in flight: resolve, connect, optional TLS handshake up to the
// server's ServerHello, abortive close. Private to the prober (node/prober.cc); it includes Asio and
// OpenSSL, so only .cc files include it.
#pragma once

#include <chrono>
#include <functional>
#include <memory>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include "node/agent/effects.h"
#include "node/prober.h"

namespace mesh::node {

using ProbeStrand = boost::asio::strand<boost::asio::io_context::executor_type>;

// Thread safety: every member runs on `strand` (start() and cancel() must be
// called there). Ownership: the session owns its socket; pending handlers
// hold a shared_ptr to it, so it lives until the last one has run. `tls`
// (the client context) and `settings` must outlive the session.
class ProbeSession : public std::enable_shared_from_this<ProbeSession> {
 public:
  ProbeSession(ProbeStrand strand, boost::asio::ssl::context& tls, const ProbeSettings& settings,
               const agent::ProbeRequest& request, ProbeDone done);

  void start();
  // Completes the probe now as though the current stage's deadline fired.
  void cancel();

 private:
  enum class Stage { resolving, connecting, handshaking, finished };
  using Clock = std::chrono::steady_clock;
  using tcp = boost::asio::ip::tcp;

  void arm_deadline(DurationMs timeout_ms);
  void on_deadline(Stage armed_for);
  void do_resolve();
  void on_resolve(const boost::system::error_code& error, tcp::resolver::results_type results);
  void do_connect(const tcp::endpoint& endpoint);
  void on_connect(const boost::system::error_code& error);
  void do_handshake();
  void on_handshake(const boost::system::error_code& error);
  // OpenSSL's message callback: a ServerHello received ends the probe.
  static void on_tls_message(int write_p, int version, int content_type, const void* buf,
                             std::size_t len, SSL* ssl, void* arg);
  void on_server_hello();
  bool prepare_socket(const tcp::endpoint& endpoint);
  void finish(ProbeFailure failure);
  ProbeFailure deadline_failure() const;
  std::uint64_t wire_bytes(ProbeFailure failure);
  void close_abortively();

  ProbeStrand strand_;
  const ProbeSettings& settings_;
  agent::ProbeOutcome outcome_;
  agent::ProbeRequest request_;
  ProbeDone done_;
  tcp::resolver resolver_;
  boost::asio::ssl::stream<tcp::socket> stream_;
  boost::asio::steady_timer deadline_;
  Stage stage_ = Stage::resolving;
  bool connect_attempted_ = false;  // a SYN left (for the wire estimate)
  Clock::time_point stage_start_;
};

}  // namespace mesh::node
