// One probe in flight: resolve, connect, optional TLS stage (our
// ClientHello, the server's answer up to its ServerHello: node/tls_hello.h),
// abortive close. Private to the prober (node/prober.cc); it includes Asio,
// so only .cc files include it.
#pragma once

#include <array>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include "node/agent/effects.h"
#include "node/prober.h"
#include "node/tls_hello.h"

namespace mesh::node {

using ProbeStrand = boost::asio::strand<boost::asio::io_context::executor_type>;

// Thread safety: every member runs on `strand` (start() and cancel() must be
// called there). Ownership: the session owns its socket; pending handlers
// hold a shared_ptr to it, so it lives until the last one has run.
// `settings` must outlive the session.
class ProbeSession : public std::enable_shared_from_this<ProbeSession> {
 public:
  ProbeSession(ProbeStrand strand, const ProbeSettings& settings,
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
  void on_hello_written(const boost::system::error_code& error, std::size_t bytes);
  void do_read();
  void on_read(const boost::system::error_code& error, std::size_t bytes);
  bool prepare_socket(const tcp::endpoint& endpoint);
  void delay_acks();  // TCP_QUICKACK off (prepare_socket's comment)
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
  tcp::socket socket_;
  boost::asio::steady_timer deadline_;
  Stage stage_ = Stage::resolving;
  bool connect_attempted_ = false;  // a SYN left (for the wire estimate)
  Clock::time_point stage_start_;
  // The TLS stage: our ClientHello, the reader of the answer, the bytes
  // read at a time (about one receive window), and the TLS bytes each way.
  std::vector<std::uint8_t> hello_;
  std::optional<ServerHelloReader> reader_;
  std::array<std::uint8_t, 4096> chunk_{};
  std::uint64_t tls_sent_ = 0;
  std::uint64_t tls_received_ = 0;
};

}  // namespace mesh::node
