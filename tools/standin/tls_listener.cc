#include "tools/standin/tls_listener.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <charconv>
#include <csignal>
#include <cstdio>
#include <memory>
#include <optional>

#include "tools/standin/block_file.h"
#include "tools/standin/certificate.h"
#include "tools/standin/session.h"

namespace mesh::standin {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using boost::system::error_code;

// After a failed accept (out of file descriptors, say), wait this long
// before the next one instead of spinning.
constexpr std::chrono::milliseconds kAcceptRetry{100};

void log_line(const std::string& text) {
  std::fprintf(stderr, "meshnode-standin: %s\n", text.c_str());
  std::fflush(stderr);
}

// "IP:port" or "[IPv6]:port", port 1..65535.
std::optional<tcp::endpoint> parse_address(const std::string& text) {
  std::string host;
  std::string port;
  if (!text.empty() && text.front() == '[') {
    std::size_t close = text.find("]:");
    if (close == std::string::npos) return std::nullopt;
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    std::size_t colon = text.rfind(':');
    if (colon == std::string::npos || text.find(':') != colon) return std::nullopt;
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  error_code error;
  asio::ip::address address = asio::ip::make_address(host, error);
  unsigned number = 0;
  auto [end, parsed] = std::from_chars(port.data(), port.data() + port.size(), number);
  if (error || parsed != std::errc() || end != port.data() + port.size() || number == 0 ||
      number > 65535) {
    return std::nullopt;
  }
  return tcp::endpoint(address, static_cast<std::uint16_t>(number));
}

class Listener {
 public:
  explicit Listener(const ListenerOptions& options)
      : options_(options),
        tls_(asio::ssl::context::tls_server),
        block_file_(options.block_file),
        acceptor_(io_),
        poll_timer_(io_),
        retry_timer_(io_),
        signals_(io_, SIGTERM, SIGINT, SIGHUP) {}

  int run(const tcp::endpoint& endpoint, const TlsIdentity& identity);

 private:
  bool bind(const tcp::endpoint& endpoint);
  void do_accept();
  void on_accept(const error_code& error, tcp::socket socket);
  void do_poll();
  void reload(bool force);
  void do_signal();
  void stop();

  const ListenerOptions& options_;
  // Sessions refer to tls_ and counters_: both outlive io_.
  asio::ssl::context tls_;
  ListenerCounters counters_;
  BlockFile block_file_;
  asio::io_context io_;
  tcp::acceptor acceptor_;
  asio::steady_timer poll_timer_;
  asio::steady_timer retry_timer_;
  asio::signal_set signals_;
};

bool Listener::bind(const tcp::endpoint& endpoint) {
  error_code error;
  acceptor_.open(endpoint.protocol(), error);
  if (!error) acceptor_.set_option(asio::socket_base::reuse_address(true), error);
  if (!error) acceptor_.bind(endpoint, error);
  if (!error) acceptor_.listen(asio::socket_base::max_listen_connections, error);
  if (error) log_line("cannot listen on " + options_.address + ": " + error.message());
  return !error;
}

int Listener::run(const tcp::endpoint& endpoint, const TlsIdentity& identity) {
  tls_.set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                   asio::ssl::context::no_sslv3);
  if (auto installed = install_identity(tls_.native_handle(), identity); !installed) {
    log_line(installed.message());
    return 2;
  }
  if (!bind(endpoint)) return 2;
  log_line("listening on " + options_.address + " (TLS, any SNI, self-signed CN=" +
           options_.address + ", deadline " + std::to_string(options_.deadline.count()) + " ms)");
  if (!options_.block_file.empty()) {
    reload(true);
    do_poll();
  }
  do_signal();
  do_accept();
  io_.run();
  log_line("stopped: " + std::to_string(counters_.accepted) + " accepted, " +
           std::to_string(counters_.handshakes) + " handshakes, " +
           std::to_string(counters_.reset) + " reset, " + std::to_string(counters_.dropped) +
           " dropped, " + std::to_string(counters_.failed) + " failed, " +
           std::to_string(counters_.refused) + " refused");
  return 0;
}

void Listener::do_accept() {
  acceptor_.async_accept(
      [this](const error_code& error, tcp::socket socket) { on_accept(error, std::move(socket)); });
}

void Listener::on_accept(const error_code& error, tcp::socket socket) {
  if (error == asio::error::operation_aborted) return;
  if (error) {
    log_line("accept failed: " + error.message());
    retry_timer_.expires_after(kAcceptRetry);
    retry_timer_.async_wait([this](const error_code& e) {
      if (!e) do_accept();
    });
    return;
  }
  ++counters_.accepted;
  error_code ignored;
  if (counters_.active >= options_.connections_max) {
    ++counters_.refused;
    socket.close(ignored);
  } else {
    std::string peer = socket.remote_endpoint(ignored).address().to_string();
    BlockAction action = block_file_.list().action_for(peer);
    std::make_shared<Session>(std::move(socket), tls_, action, options_.deadline, counters_)
        ->start();
  }
  do_accept();
}

void Listener::do_poll() {
  poll_timer_.expires_after(std::chrono::milliseconds(kBlockFilePollMs));
  poll_timer_.async_wait([this](const error_code& error) {
    if (error) return;
    reload(false);
    do_poll();
  });
}

void Listener::reload(bool force) {
  std::string line = block_file_.refresh(force);
  if (!line.empty()) log_line(line);
}

void Listener::do_signal() {
  signals_.async_wait([this](const error_code& error, int signal) {
    if (error) return;
    if (signal != SIGHUP) return stop();
    if (!options_.block_file.empty()) reload(true);
    do_signal();
  });
}

void Listener::stop() {
  error_code ignored;
  acceptor_.close(ignored);
  poll_timer_.cancel();
  retry_timer_.cancel();
  // Open sessions are abandoned: destroying io_ closes their sockets.
  io_.stop();
}

}  // namespace

int run_listener(const ListenerOptions& options) {
  std::optional<tcp::endpoint> endpoint = parse_address(options.address);
  if (!endpoint) {
    log_line("--address '" + options.address + "' is not IP:port or [IPv6]:port (port 1..65535)");
    return 2;
  }
  auto identity = make_self_signed(options.address);
  if (!identity) {
    log_line(identity.message());
    return 2;
  }
  Listener listener(options);
  return listener.run(*endpoint, *identity);
}

}  // namespace mesh::standin
