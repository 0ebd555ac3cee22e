// The outgoing side of the gossip transport towards one peer (internal to
// node/transport*): a bounded queue of frames, the peer's own connection
// once adopted, and at most one TCP connection of ours, opened on demand
// when there is no adopted one, reused, reopened after a failure with
// exponential backoff and jitter. When both are open, frames go on the one
// the member with the smaller id opened (docs/PROTOCOL.md, "2a. Transport").
//
// Threading: send() and stats() are called on the daemon's strand (the
// Transport's caller), close() from any thread; everything else runs on the
// link's own strand. A link never blocks and shares no queue, so a peer that
// is down or slow stalls nothing but its own frames.
//
// States: idle (no socket) -> connecting (resolve + connect, one deadline)
// -> connected, or -> backing_off -> idle -> connecting ...; closed is final.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include "common/bytes.h"
#include "common/rng.h"
#include "node/frame_connection.h"
#include "node/transport_context.h"

namespace mesh::node {

class PeerLink : public std::enable_shared_from_this<PeerLink> {
 public:
  // `jitter_seed`: the seed of this link's backoff jitter (mesh::Rng).
  PeerLink(std::shared_ptr<TransportContext> context, ServerId peer, Endpoint to,
           std::uint64_t jitter_seed);

  // Queues `frame` for the peer, connecting if needed. At queue_bytes_max the
  // frame is dropped and counted (frames_dropped_queue_full). `to`: where the
  // peer listens now; a change applies from the next connection attempt.
  // REQUIRES: calls come from one thread or strand (the daemon's).
  void send(const Endpoint& to, Bytes frame);

  // Frames may go on `inbound`, the peer's own connection, adopted after
  // it carried the peer's sealed frame; replaces an older adopted one
  // (which then falls idle). Reports the path up. Any thread.
  void adopt(std::shared_ptr<FrameConnection> inbound);

  // Cuts a reconnect backoff short: the next attempt starts now, if frames
  // wait. Any thread.
  void retry_now();

  // Closes the link for good: the connections, the timers, the queue
  // (counted as frames_dropped_link_closed). Any thread.
  void close(CloseReason reason);

  // A snapshot. REQUIRES: on the thread or strand that calls send().
  PeerLinkStats stats() const;

  // The reconnect delay after `failures` failures in a row, drawn from `rng`:
  // uniform in [min, min(max, min * 2^failures)] ("full jitter" above a
  // floor, so a peer that refuses at once is never hammered).
  static DurationMs backoff_delay(std::uint32_t failures, DurationMs min, DurationMs max, Rng& rng);

 private:
  using ErrorCode = boost::system::error_code;
  using Tcp = boost::asio::ip::tcp;
  using UserTimeout = boost::asio::detail::socket_option::integer<IPPROTO_TCP, TCP_USER_TIMEOUT>;
  enum class State { idle, connecting, connected, backing_off, closed };
  // Where the frame at the front of the queue is being written, if anywhere.
  enum class Writing { none, outbound, inbound };

  void on_send(Endpoint to, std::shared_ptr<const Bytes> frame);
  void pump();
  void do_resolve();
  void on_resolve(const ErrorCode& error, const Tcp::resolver::results_type& results,
                  std::uint64_t attempt);
  void do_connect_next();
  void on_connect(const ErrorCode& error, std::uint64_t attempt);
  void on_connect_deadline(const ErrorCode& error, std::uint64_t attempt);
  void on_attempt_failed();
  void on_backoff_done(const ErrorCode& error);
  void on_connected();
  void on_written();
  void on_connection_closed(CloseReason reason);
  void on_adopt(std::shared_ptr<FrameConnection> inbound);
  void on_inbound_written(const FrameConnection* inbound);
  void on_inbound_closed(const FrameConnection* inbound, CloseReason reason);
  void on_retry_now();
  void do_backoff();
  void on_close(CloseReason reason);
  void drop_queue();
  // Drops the frames (not the one being written) that waited longer than
  // queue_age_max_ms for the peer: what they carried is old news, and the
  // SYNC at the next link-up repairs what the peer lacks.
  void drop_stale();
  void frame_written();

  std::shared_ptr<TransportContext> context_;
  const ServerId peer_;
  boost::asio::strand<boost::asio::io_context::executor_type> strand_;
  Tcp::resolver resolver_;
  Tcp::socket socket_;                      // during an attempt; then moved into connection_
  boost::asio::steady_timer connect_timer_;
  boost::asio::steady_timer backoff_timer_;
  std::shared_ptr<FrameConnection> connection_;  // ours, while connected
  std::shared_ptr<FrameConnection> inbound_;     // the peer's, adopted; runs on its own strand
  const bool prefer_ours_;                       // our id is the smaller: ours is the pair's connection

  // On the strand.
  State state_ = State::idle;
  Writing writing_ = Writing::none;
  Endpoint to_;
  Endpoint to_next_;                        // the latest `to`; taken at the next attempt
  std::uint64_t attempt_ = 0;               // identifies the attempt a handler belongs to
  std::vector<Tcp::endpoint> candidates_;   // resolved addresses of this attempt
  std::size_t candidate_index_ = 0;
  bool attempt_path_failed_ = false;        // this attempt timed out or found the host unreachable
  struct Queued {
    std::shared_ptr<const Bytes> frame;
    std::chrono::steady_clock::time_point at;  // when send() handed it over
  };
  std::deque<Queued> queue_;  // front: being written when connected
  Rng rng_;

  // Read by stats() from any thread.
  std::atomic<std::size_t> queued_bytes_{0};     // raised by send(), lowered on the strand
  std::atomic<bool> connected_{false};
  std::atomic<bool> adopted_{false};             // inbound_ is set
  std::atomic<UnixMs> last_frame_ms_{0};         // last frame read from the peer
  std::atomic<std::uint32_t> failures_{0};       // attempts failed since the last frame written
  Endpoint stats_endpoint_;                      // only on the thread that calls send()
};

}  // namespace mesh::node
