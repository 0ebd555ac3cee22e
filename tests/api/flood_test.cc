// The API stays available to a panel under a connection flood (docs/API.md,
// "Under a connection flood"): the real ApiServer, served by two threads as
// the daemon serves it, on real loopback sockets. A flood of slow clients,
// each sending a byte a second and re-opening its connection the moment it
// is closed, holds every connection it can from other source addresses
// (127.0.0.0/8 is all loopback); meanwhile a poller that presents a valid
// token asks GET /v1/routes again and again, each time on a new connection.
// What counts is the share of its requests answered, never a latency, so a
// loaded machine slows the test down without failing it.
#include <doctest/doctest.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <netinet/in.h>
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "node/api/server.h"
#include "tests/api/fixture.h"

namespace mesh::api::testing {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
using Tcp = boost::asio::ip::tcp;
using Address = boost::asio::ip::address;

// The flood's connections, the server's and their churn in one process.
void raise_descriptor_limit(rlim_t wanted) {
  rlimit limit{};
  REQUIRE(::getrlimit(RLIMIT_NOFILE, &limit) == 0);
  if (limit.rlim_cur >= wanted) return;
  rlimit raised{wanted, std::max(wanted, limit.rlim_max)};  // root may raise the hard limit too
  if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) return;
  raised = {limit.rlim_max, limit.rlim_max};
  REQUIRE_MESSAGE((limit.rlim_max >= wanted && ::setrlimit(RLIMIT_NOFILE, &raised) == 0),
                  "the flood test needs " << wanted << " file descriptors; the hard limit is " << limit.rlim_max);
}

// The server of node/api/server.h as the daemon runs it ([api] threads =
// 2, node/daemon.cc): two io_contexts, one thread each; the acceptor on the
// first, sessions dealt to both.
struct Served {
  Served() {
    box.publish(snapshot(7));
    ApiServerSettings settings;
    settings.listen = Endpoint{"127.0.0.1", 0};
    server = std::make_unique<ApiServer>(ios[0], settings, std::make_shared<const TokenSet>(tokens()), box,
                                         [](std::string, std::function<void(ApiResponse)>) {},
                                         std::vector<boost::asio::io_context*>{&ios[0], &ios[1]});
    auto bound = server->start();
    REQUIRE_MESSAGE(bound.ok(), bound.message());
    port = bound->port;
    for (auto& io : ios) {
      work.push_back(boost::asio::make_work_guard(io));
      threads.emplace_back([&io] { io.run(); });
    }
  }
  // As the daemon stops it: the threads run out of work once the acceptor
  // and every connection are closed (then, and only then, may the
  // io_contexts go: a pending accept holds a socket of the other one).
  ~Served() {
    server->stop();
    work.clear();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!(ios[0].stopped() && ios[1].stopped()) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    CHECK_MESSAGE((ios[0].stopped() && ios[1].stopped()), "the server's threads still had work 10 s after stop()");
    for (auto& io : ios) io.stop();
    for (auto& thread : threads) thread.join();
  }
  boost::asio::io_context ios[2];
  std::vector<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work;
  SnapshotBox box;
  std::unique_ptr<ApiServer> server;
  std::uint16_t port = 0;
  std::vector<std::thread> threads;
};

// Opens a socket bound to `source` (any port), for a client connection.
void open_from(Tcp::socket& socket, const Address& source, beast::error_code& error) {
  socket.open(Tcp::v4(), error);
  if (error) return;
  // The port is picked at connect, for the whole 4-tuple: sources do not
  // run out of ports while the server holds closed connections.
  const int on = 1;
  ::setsockopt(socket.native_handle(), IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &on, sizeof on);
  socket.bind(Tcp::endpoint(source, 0), error);
}

// The flood: `per_source` slow connections from each source address, each
// sending a byte of a header that never ends every second, and opened
// again as soon as the server closes it. Runs on a thread of its own.
class Flood {
 public:
  Flood(std::uint16_t port, const std::vector<Address>& sources, int per_source)
      : target_(boost::asio::ip::make_address("127.0.0.1"), port) {
    for (const Address& source : sources) {
      for (int i = 0; i < per_source; ++i) std::make_shared<Slow>(*this, source)->open();
    }
    thread_ = std::thread([this] { io_.run(); });
  }
  ~Flood() {
    io_.stop();
    thread_.join();
  }
  std::uint64_t connections() const { return connections_; }

 private:
  struct Slow : std::enable_shared_from_this<Slow> {
    Slow(Flood& flood, Address source) : flood(flood), source(source), socket(flood.io_), timer(flood.io_) {}

    void open() {
      beast::error_code error;
      open_from(socket, source, error);
      if (error) return again(std::chrono::milliseconds(50));
      socket.async_connect(flood.target_, [self = shared_from_this()](beast::error_code connect_error) {
        if (connect_error) return self->again(std::chrono::milliseconds(50));
        ++self->flood.connections_;
        self->read();
        self->trickle();
      });
    }
    // One byte now, the next in a second; the header never ends.
    void trickle() {
      static constexpr char kHeader[] = "GET /v1/routes HTTP/1.1\r\nX-Slow: ";
      const char byte = sent < sizeof kHeader - 1 ? kHeader[sent] : 'a';
      ++sent;
      boost::asio::async_write(socket, boost::asio::buffer(&byte, 1),
                               [self = shared_from_this()](beast::error_code, std::size_t) {});
      timer.expires_after(std::chrono::seconds(1));
      timer.async_wait([self = shared_from_this()](beast::error_code error) {
        if (!error) self->trickle();
      });
    }
    // Until the server closes it; then a new connection, at once.
    void read() {
      socket.async_read_some(boost::asio::buffer(scratch), [self = shared_from_this()](beast::error_code error,
                                                                                         std::size_t) {
        if (!error) return self->read();
        self->timer.cancel();
        beast::error_code ignored;
        self->socket.close(ignored);
        std::make_shared<Slow>(self->flood, self->source)->open();
      });
    }
    void again(std::chrono::milliseconds after) {
      beast::error_code ignored;
      socket.close(ignored);
      timer.expires_after(after);
      timer.async_wait([self = shared_from_this()](beast::error_code error) {
        if (!error) std::make_shared<Slow>(self->flood, self->source)->open();
      });
    }

    Flood& flood;
    Address source;
    Tcp::socket socket;
    boost::asio::steady_timer timer;
    std::size_t sent = 0;
    char scratch[512];
  };

  boost::asio::io_context io_{1};
  Tcp::endpoint target_;
  std::atomic<std::uint64_t> connections_{0};
  std::thread thread_;
};

// One poll on a new connection from `source`: true when it was answered 200.
bool poll_once(std::uint16_t port, const Address& source) {
  boost::asio::io_context io;
  beast::tcp_stream stream(io);
  beast::error_code error;
  open_from(stream.socket(), source, error);
  if (error) return false;
  stream.expires_after(std::chrono::seconds(10));
  stream.connect(Tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), port), error);
  if (error) return false;
  http::request<http::empty_body> request{http::verb::get, "/v1/routes", 11};
  request.set(http::field::host, "127.0.0.1");
  request.set(http::field::authorization, std::string("Bearer ") + kReadToken);
  request.keep_alive(false);
  http::write(stream, request, error);
  if (error) return false;
  beast::flat_buffer buffer;
  http::response<http::string_body> response;
  http::read(stream, buffer, response, error);
  return !error && response.result_int() == 200;
}

std::vector<Address> addresses(int network_from, int networks, int host_from, int per_network) {
  std::vector<Address> out;
  for (int n = network_from; n < network_from + networks; ++n) {
    for (int h = host_from; h < host_from + per_network; ++h) {
      out.push_back(boost::asio::ip::make_address("127.0." + std::to_string(n) + "." + std::to_string(h)));
    }
  }
  return out;
}

// Floods the server from `sources` and polls from 127.0.0.2; the share of
// polls answered.
double answered_under_flood(const std::vector<Address>& sources, int per_source) {
  raise_descriptor_limit(4096);
  Served served;
  Flood flood(served.port, sources, per_source);
  // The flood is in force once the server is full and has shed connections.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while ((served.server->stats().connections_open < kConnectionsMax || served.server->stats().shed() == 0) &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  REQUIRE_MESSAGE(served.server->stats().connections_open == kConnectionsMax, "the flood never filled the server");
  const Address poller = boost::asio::ip::make_address("127.0.0.2");
  constexpr int kPolls = 60;
  int answered = 0;
  for (int i = 0; i < kPolls; ++i) {
    answered += poll_once(served.port, poller);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const ApiServerStats stats = served.server->stats();
  MESSAGE("answered " << answered << " of " << kPolls << " polls; the flood opened " << flood.connections()
                      << " connections; the server refused " << stats.connections_refused << " at the cap and "
                      << stats.connections_refused_address << " over an address's cap, evicted "
                      << stats.connections_evicted << "; " << stats.connections_open << " open");
  CHECK(stats.connections_open <= kConnectionsMax);
  CHECK(stats.shed() > 0);
  return static_cast<double>(answered) / kPolls;
}

TEST_CASE("a poller with a token gets its answers under 1,000 slow connections from other addresses") {
  // 20 addresses in two other /24s, 50 connections each: more than the
  // cap of an address (32) and, together, than the server holds (256).
  CHECK(answered_under_flood(addresses(1, 2, 1, 10), 50) >= 0.95);
}

TEST_CASE("a poller with a token gets its answers under 300 slow connections from its own network") {
  // 100 other addresses of the poller's /24 (127.0.0.3 .. 127.0.0.102), 3 each.
  CHECK(answered_under_flood(addresses(0, 1, 3, 100), 3) >= 0.95);
}

}  // namespace
}  // namespace mesh::api::testing
