// The accepting side of the gossip transport (internal to node/transport*):
// the listening socket and the accepted connections, at most
// inbound_connections_max at once, kept or let go by the rules of
// node/inbound_admission.h. docs/PROTOCOL.md, "2a. Transport".
//
// Threading: open() runs once, before start(), on the caller's thread;
// start(), stop() and connections() may be called from any thread; the
// acceptor and the registry live on the listener's own strand, and each
// accepted connection gets a strand of its own. Held by shared_ptr: accept
// handlers and closing connections keep it alive (or find it gone) after
// the Transport let go.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <unordered_map>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include "common/result.h"
#include "node/frame_connection.h"
#include "node/inbound_admission.h"
#include "node/peer_link.h"
#include "node/transport_context.h"

namespace mesh::node {

class Listener : public std::enable_shared_from_this<Listener> {
 public:
  // Pause after a failed accept (e.g. out of descriptors), so the loop never spins.
  static constexpr DurationMs kAcceptRetryMs = 100;

  explicit Listener(std::shared_ptr<TransportContext> context);

  // Binds settings.listen (SO_REUSEADDR) and listens; returns the bound
  // address (the real port when 0 was asked). The error names the address.
  // REQUIRES: start() not called yet.
  Result<Endpoint, TransportError> open();

  // Starts accepting. REQUIRES: open() succeeded.
  void start();

  // Stops accepting and closes every accepted connection. Idempotent.
  void stop();

  // Accepted connections open now, and of those the unauthenticated ones.
  std::size_t connections() const { return session_count_.load(std::memory_order_relaxed); }
  std::size_t unauthenticated() const { return unauthenticated_count_.load(std::memory_order_relaxed); }

  // Hands the accepted connection `id`, still open, to `link` (the member
  // whose sealed frame it carried): PeerLink::adopt. Any thread.
  void adopt(InboundId id, std::shared_ptr<PeerLink> link);

 private:
  using ErrorCode = boost::system::error_code;

  void do_accept();
  void on_accept(const ErrorCode& error, boost::asio::ip::tcp::socket socket);
  void on_accept_retry(const ErrorCode& error);
  void admit(boost::asio::ip::tcp::socket socket);
  void on_session_heard(std::uint64_t id);
  void on_session_closed(std::uint64_t id);
  void update_counts();
  void on_stop();

  std::shared_ptr<TransportContext> context_;
  boost::asio::strand<boost::asio::io_context::executor_type> strand_;
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer retry_timer_;

  // On the strand.
  bool stopped_ = false;
  std::uint64_t next_session_id_ = 0;
  // Accepted connections still open, by a serial id (they unregister on close).
  std::unordered_map<std::uint64_t, std::shared_ptr<FrameConnection>> sessions_;
  InboundAdmission admission_;
  std::atomic<std::size_t> session_count_{0};  // sessions_.size(), for any thread
  std::atomic<std::size_t> unauthenticated_count_{0};
};

}  // namespace mesh::node
