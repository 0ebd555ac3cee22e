// Real servers on 127.0.0.1 ephemeral ports for the prober and self-check
// tests: a TLS server with a self-signed certificate made in-process, and
// servers that misbehave the ways the probe's failure reasons name. They run
// on the test's io_context, next to the code under test.
#pragma once

#include <chrono>
#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>

namespace mesh::test {

enum class ServerMode {
  tls,                // completes the TLS handshake, records the SNI and ALPN offered
  tls_large_flight,   // the same with a certificate chain of 8 copies (a ~4 KB server flight)
  tls_alert,          // the servername callback refuses: alert unrecognized_name
  tls12_only,         // like tls, but TLS 1.2 at most: a TLS 1.2 ServerHello
  tls_hello_retry,    // like tls, but P-256 only: a HelloRetryRequest naming P-256
  hold,               // accepts, reads, never answers
  reset_after_hello,  // reads the ClientHello, then RST
  garbage,            // answers the ClientHello with "HTTP/1.1 400 ..." and holds
};

struct Connection;

class TestServer {
 public:
  TestServer(boost::asio::io_context& io, ServerMode mode);
  ~TestServer();
  TestServer(const TestServer&) = delete;
  TestServer& operator=(const TestServer&) = delete;

  std::uint16_t port() const { return port_; }
  std::size_t accepted() const { return accepted_; }
  // Connections that sent at least one byte (a ClientHello, for TLS probes).
  std::size_t talked() const { return talked_; }
  // The most connections open at once, counted at each accept.
  std::size_t open_max() const { return open_max_; }
  const std::string& last_sni() const { return last_sni_; }
  const std::vector<std::string>& last_alpn_offered() const { return last_alpn_offered_; }
  std::size_t handshakes_completed() const { return handshakes_completed_; }
  const std::string& last_peer_address() const { return last_peer_address_; }

  // OpenSSL callbacks reach the server through these.
  void on_servername(const std::string& sni) { last_sni_ = sni; }
  void on_alpn(std::vector<std::string> offered) { last_alpn_offered_ = std::move(offered); }
  ServerMode mode() const { return mode_; }

 private:
  using tcp = boost::asio::ip::tcp;
  void do_accept();
  void on_accept(tcp::socket socket);
  void drain(const std::shared_ptr<Connection>& connection, bool first);
  void serve_plain(const std::shared_ptr<Connection>& connection);
  void serve_tls(const std::shared_ptr<Connection>& connection);
  std::size_t count_open();

  ServerMode mode_;
  boost::asio::ssl::context tls_;
  tcp::acceptor acceptor_;
  std::uint16_t port_ = 0;
  std::list<std::shared_ptr<Connection>> connections_;  // every accepted one, until the server dies
  std::size_t accepted_ = 0;
  std::size_t talked_ = 0;
  tcp::endpoint peer_;  // filled by the pending accept
  std::size_t open_max_ = 0;
  std::size_t handshakes_completed_ = 0;
  std::string last_sni_;
  std::vector<std::string> last_alpn_offered_;
  std::string last_peer_address_;
};

// A port on 127.0.0.1 with nothing listening (bound, then closed).
std::uint16_t closed_port();

// A listener whose accept queue is full, so that the kernel drops further
// SYNs: a connect to it never completes. Owns its raw descriptors.
class FullBacklogListener {
 public:
  FullBacklogListener();
  ~FullBacklogListener();
  FullBacklogListener(const FullBacklogListener&) = delete;
  FullBacklogListener& operator=(const FullBacklogListener&) = delete;
  std::uint16_t port() const { return port_; }

 private:
  std::vector<int> fds_;
  std::uint16_t port_ = 0;
};

// Runs `io` until `done()` holds or `limit` passes (a safety net against a
// hang, not a sleep: tests assert outcomes, not durations). Returns done().
template <class Pred>
bool run_until(boost::asio::io_context& io, Pred done,
               std::chrono::milliseconds limit = std::chrono::seconds(20)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  const auto guard = boost::asio::make_work_guard(io);  // keeps run_one_for waiting, not returning
  while (!done() && std::chrono::steady_clock::now() < deadline) {
    io.run_one_for(std::chrono::milliseconds(20));
  }
  return done();
}

}  // namespace mesh::test
