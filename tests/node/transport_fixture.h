// Helpers for the gossip transport tests (tests/node/transport*_test.cc):
// transports on 127.0.0.1 ephemeral ports driven by one io_context on the
// test thread (so the test thread is the "daemon strand"), raw client
// sockets that misbehave, and bounded polling: run the io_context until a
// condition holds or a deadline passes. Tests assert outcomes, not durations.
#pragma once

#include <doctest/doctest.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>

#include "node/frame_codec.h"
#include "node/transport.h"

namespace mesh::node::test {

using Tcp = boost::asio::ip::tcp;
using namespace std::chrono_literals;

// Generous: only reached when something is broken.
inline constexpr std::chrono::milliseconds kPatience = 20s;

// Runs `io` until `done()` or `limit` passed; true when done.
inline bool run_until(boost::asio::io_context& io, const std::function<bool()>& done,
                      std::chrono::milliseconds limit = kPatience) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    if (io.stopped()) io.restart();
    io.run_for(5ms);
  }
  return true;
}

// Runs `io` for a window of wall time (to let something *not* happen).
inline void run_for(boost::asio::io_context& io, std::chrono::milliseconds window) {
  (void)run_until(io, [] { return false; }, window);
}

inline DaemonPost post_to(boost::asio::io_context& io) {
  return [&io](std::function<void()> task) { boost::asio::post(io, std::move(task)); };
}

// Short deadlines for tests.
inline TransportSettings test_settings() {
  TransportSettings settings;
  settings.listen = Endpoint{"127.0.0.1", 0};
  settings.connect_timeout_ms = 2'000;
  settings.idle_timeout_ms = 10'000;
  settings.read_timeout_ms = 5'000;
  settings.auth_timeout_ms = 60'000;  // tests that adopt nothing keep their connections
  settings.write_timeout_ms = 5'000;
  settings.backoff_min_ms = 50;
  settings.backoff_max_ms = 400;
  return settings;
}

// A frame whose first 4 bytes carry `index` (big-endian) and whose other
// bytes follow a pattern derived from it.
inline Bytes test_frame(std::uint32_t index, std::size_t size = 64) {
  Bytes frame(size);
  for (std::size_t i = 0; i < size; ++i) frame[i] = static_cast<std::uint8_t>(index * 31 + i);
  const FramePrefix prefix = encode_frame_prefix(index);
  for (std::size_t i = 0; i < 4 && i < size; ++i) frame[i] = prefix[i];
  return frame;
}

// One transport and what it received.
struct TestNode {
  TestNode(boost::asio::io_context& io, TransportSettings settings, std::uint64_t seed = 1)
      : transport(io, post_to(io), std::move(settings), seed,
                  TransportCallbacks{
                      .on_frame = [this](Bytes frame, InboundId inbound) {
                        received.push_back(std::move(frame));
                        inbound_ids.push_back(inbound);
                      },
                      .on_path_failed = [this](const ServerId& peer) { failed_paths.push_back(peer); },
                      .on_path_up = [this](const ServerId& peer) { up_paths.push_back(peer); }}) {}

  Endpoint start() {
    auto bound = transport.start();
    REQUIRE_MESSAGE(bound.ok(), (bound.ok() ? "" : bound.message()));
    address = *bound;
    return address;
  }
  TransportCounters counters() const { return transport.stats().counters; }

  std::vector<Bytes> received;  // before `transport`: its callbacks write here
  std::vector<InboundId> inbound_ids;  // with each frame received
  std::vector<ServerId> failed_paths;  // on_path_failed, in order
  std::vector<ServerId> up_paths;      // on_path_up, in order
  Transport transport;
  Endpoint address;
};

// A client socket that speaks raw bytes to a transport's listener.
struct RawClient {
  RawClient(boost::asio::io_context& io, const Endpoint& to) : socket(io) {
    boost::system::error_code error;
    socket.connect(Tcp::endpoint(boost::asio::ip::make_address(to.host), to.port), error);
    REQUIRE_MESSAGE(!error, error.message());
  }
  void send(const Bytes& bytes) {
    boost::system::error_code error;
    boost::asio::write(socket, boost::asio::buffer(bytes), error);
    REQUIRE_MESSAGE(!error, error.message());
  }
  void send_prefix(std::uint32_t length) {
    const FramePrefix prefix = encode_frame_prefix(length);
    send(Bytes(prefix.begin(), prefix.end()));
  }
  // Reads (and discards) until the server closes; `closed` turns true then.
  void watch_close() {
    socket.async_read_some(boost::asio::buffer(scratch),
                           [this](const boost::system::error_code& error, std::size_t) {
                             if (error) {
                               closed = true;
                             } else {
                               watch_close();
                             }
                           });
  }
  void close() {
    boost::system::error_code ignored;
    socket.close(ignored);
  }

  Tcp::socket socket;
  bool closed = false;
  std::array<std::uint8_t, 256> scratch{};
};

// A port on 127.0.0.1 that refuses every connection while this lives: it
// is bound and never listens. A port that was merely free a moment ago can
// be taken by a test running beside this one (ctest -j), and a connect to
// it then succeeds; this one cannot be: the socket holds it without
// SO_REUSEADDR, so no other socket binds it and the kernel does not pick it
// as a connection's source port. release() frees it for a listener.
class RefusingPort {
 public:
  explicit RefusingPort(boost::asio::io_context& io) : acceptor_(io) {
    acceptor_.open(Tcp::v4());
    acceptor_.bind(Tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0));
    endpoint_ = Endpoint{"127.0.0.1", acceptor_.local_endpoint().port()};
  }
  const Endpoint& endpoint() const { return endpoint_; }
  void release() {
    boost::system::error_code ignored;
    acceptor_.close(ignored);
  }

 private:
  Tcp::acceptor acceptor_;
  Endpoint endpoint_;
};

}  // namespace mesh::node::test
