// One client connection of the stand-in listener. Depending on the block
// list's verdict for the client's address, at accept time:
//   none:  a TLS handshake (any SNI), then a TLS shutdown and close;
//   reset: wait for the client's first bytes (its ClientHello), then reset
//          the connection (SO_LINGER 0 + close): a censor's DPI reset;
//   drop:  hold the connection, read nothing, answer nothing; closed at the
//          deadline (the client's handshake times out).
// Every connection is closed at its deadline whatever it is doing. Runs on
// the listener's one thread; owns itself through the handlers' shared_ptr.
#pragma once

#include <array>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <memory>

#include "tools/standin/block_list.h"

namespace mesh::standin {

struct ListenerCounters {
  std::uint64_t accepted = 0;
  std::uint64_t refused = 0;  // over the connection limit: closed at once
  std::uint64_t handshakes = 0;
  std::uint64_t failed = 0;  // handshake error or deadline (not blocked)
  std::uint64_t reset = 0;
  std::uint64_t dropped = 0;
  std::uint64_t active = 0;  // sessions alive now
};

class Session : public std::enable_shared_from_this<Session> {
 public:
  // REQUIRES: `tls` and `counters` outlive the session.
  Session(boost::asio::ip::tcp::socket socket, boost::asio::ssl::context& tls, BlockAction action,
          std::chrono::milliseconds deadline, ListenerCounters& counters);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  void start();

 private:
  void do_handshake();
  void on_handshake(const boost::system::error_code& error);
  void on_shutdown();
  void do_read_hello();
  void on_hello(const boost::system::error_code& error);
  void on_deadline(const boost::system::error_code& error);
  void close(bool reset);

  boost::asio::ssl::stream<boost::asio::ip::tcp::socket> stream_;
  boost::asio::steady_timer deadline_;
  BlockAction action_;
  std::chrono::milliseconds deadline_after_;
  ListenerCounters& counters_;
  std::array<std::uint8_t, 512> hello_{};
  bool handshake_done_ = false;
  bool closed_ = false;
};

}  // namespace mesh::standin
