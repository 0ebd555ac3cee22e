// The gossip transport (docs/PROTOCOL.md, "2a. Transport"): carries sealed
// frames between members over TCP, each frame a 4-byte big-endian length and
// that many bytes. It trusts nothing and reads no frame beyond its length:
// frames authenticate their sender, and the gossip core decides what they
// are worth. Frames arrive from every connection, accepted or opened. Frames
// for a peer go on one connection: the peer's own connection to us once the
// daemon has adopted it (it carried the peer's sealed frame), else one this
// node opens on demand and reuses. When both exist, the one the member with
// the smaller id opened is used and the other falls idle, so a pair settles
// on one connection, and a peer behind a firewall that lets only its own
// connections through is still reached.
//
// Threading: the constructor, every public function and the destructor run
// on the daemon's strand (or on one thread while `io` is not running);
// on_frame runs there too, through `post_to_daemon`. Sockets and timers run
// on strands of their own (one per connection, one for the listener), so a
// busy daemon never delays a socket and a stalled peer never delays anyone.
// Outstanding handlers own what they touch: destroying the Transport with
// connections open is safe, and `io` runs out of work once they finish.
// No Asio type appears here (it costs every includer ~1.5 s to compile).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/bytes.h"
#include "common/result.h"
#include "common/server_id.h"
#include "node/transport_settings.h"

namespace boost::asio {
class io_context;
}

namespace mesh::node {

// Runs `task` on the daemon's strand, later, never inline. The daemon passes
//   [strand](std::function<void()> task) { boost::asio::post(strand, std::move(task)); }
// Thread-safe: the transport calls it from its own strands.
using DaemonPost = std::function<void(std::function<void()> task)>;

// An accepted connection not adopted yet, as on_frame names it; 0: the frame
// came on a connection this node opened, or on one already adopted.
using InboundId = std::uint64_t;

// What the transport tells the daemon, on the daemon's strand.
struct TransportCallbacks {
  // Each whole frame, in the order of its connection, with the connection
  // it came on when that is an accepted one not adopted yet.
  std::function<void(Bytes frame, InboundId inbound)> on_frame;
  // The path to `peer` failed: a connect timed out or found the host
  // unreachable, or data written to it (on a connection of either side)
  // went unacknowledged for user_timeout_ms (TCP_USER_TIMEOUT) or its write
  // for write_timeout_ms. A refused or reset connection is not one: the
  // host answered (its daemon is down). May be empty.
  std::function<void(const ServerId& peer)> on_path_failed;
  // There is a working path to `peer`: a connection to it was established,
  // or its own connection was adopted. May be empty.
  std::function<void(const ServerId& peer)> on_path_up;
};

class Transport {
 public:
  // `io`: where sockets and timers run (any number of threads); it must
  // outlive the Transport and every handler it leaves behind.
  // `post_to_daemon`: how the callbacks reach the daemon's strand.
  // `jitter_seed`: seeds the reconnect jitter (one mesh::Rng per peer).
  Transport(boost::asio::io_context& io, DaemonPost post_to_daemon, TransportSettings settings,
            std::uint64_t jitter_seed, TransportCallbacks callbacks);
  ~Transport();  // stop()
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  // Binds settings.listen (SO_REUSEADDR) and starts accepting. Returns the
  // bound address (the real port when port 0 was asked); an error names the
  // address and the reason. REQUIRES: not started, not stopped.
  Result<Endpoint, TransportError> start();

  // Queues `frame` for `peer`, whose transport listens at `to`; never blocks.
  // Writes it on the peer's adopted connection, or on one it opens on
  // demand; frames wait while the peer is down, up to queue_bytes_max per
  // peer, beyond which new frames are dropped and counted. Takes the frame;
  // after stop() or before start(): dropped.
  void send(const ServerId& peer, const Endpoint& to, Bytes frame);

  // The frame on_frame gave with `inbound` was sealed by member `peer`
  // (who listens at `to`): frames for it may go on that connection, which
  // is now a member's (docs/PROTOCOL.md §2a, "Connections"); on_path_up
  // follows. A connection closed meanwhile is ignored.
  void adopt(InboundId inbound, const ServerId& peer, const Endpoint& to);

  // Connections that failed lately may work again (a gossip link came back
  // after a dead spell, so a partition or block has likely lifted): every
  // peer waiting out a reconnect backoff tries now. At most once per
  // kRetryNowIntervalMs; later calls in that window do nothing.
  void retry_now();
  static constexpr DurationMs kRetryNowIntervalMs = 5'000;

  // The roster changed: closes the links of every peer not in `peers` and
  // drops their queued frames (the core's SYNC repairs what is lost).
  void retain_peers(const std::vector<ServerId>& peers);

  // Stops accepting, closes every connection, cancels every timer; frames
  // received afterwards are not delivered. Idempotent.
  void stop();

  // Counters and the per-peer links (sorted by peer id).
  TransportStats stats() const;

  // When the listener began to shed inbound connections (evict or refuse
  // them: node/inbound_admission.h) since the last call, or has shed none
  // for kShedQuietMs after shedding: the line for the daemon's log. `now`
  // is the daemon's clock.
  struct SheddingLine {
    bool started = false;  // it began to shed (a warning); false: it stopped
    std::string message;
  };
  std::optional<SheddingLine> shedding_change(UnixMs now);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mesh::node
