// Gossip frames as TCP carries them (docs/SIMULATOR.md, "Network"): the
// daemon sends every frame to a peer on one connection it opened
// (docs/PROTOCOL.md §2a), so a packet lost on the way is sent again after a
// retransmission timeout and the frame arrives late, in order, instead of
// being lost. A connection is opened on demand with a handshake (whose SYN
// and SYN-ACK can be lost too) and closed after the daemon's idle timeout.
// Frames vanish only when the connection breaks: a block or partition cuts
// the path, the receiver's agent is down, or the loss never relents.
//
// `GossipLoss::frames` is the older model kept as a stress setting: each
// frame is one datagram, lost with the link's loss.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>

#include "common/rng.h"
#include "common/time.h"
#include "tools/meshsim/network.h"

namespace mesh::sim {

struct StreamCounters {
  std::uint64_t handshakes = 0;        // connections opened (each after idle or a break)
  std::uint64_t syn_retries = 0;       // SYN or SYN-ACK lost: the handshake tried again
  std::uint64_t retransmissions = 0;   // data segments sent again after a loss
  std::uint64_t frames_delayed = 0;    // frames whose arrival a loss or a handshake put off
  std::uint64_t frames_held_in_order = 0;  // frames held back behind an earlier, later-arriving one
  std::uint64_t connections_failed = 0;  // loss that never relented: the frame and connection dropped
};

class Streams {
 public:
  explicit Streams(const Network& network);

  // When a frame of `bytes` (without its length prefix) sent now from
  // `from` to `to` arrives, the path between them being open; nullopt when
  // the connection fails (loss on every try of the daemon's limits). Draws
  // from `rng` for the jitter of a handshake and on links with loss.
  std::optional<UnixMs> arrival(std::uint32_t from, std::uint32_t to, std::size_t bytes, UnixMs now,
                                Rng& rng);
  // When the last arrival() that returned nullopt had the daemon give up:
  // the first connect's deadline, or the user timeout of the segment that
  // was never acknowledged. The daemon reports the path failed then.
  UnixMs failed_at() const { return failed_at_; }
  // How long the daemon takes to find the path from -> to cut, for a frame
  // sent now: the user timeout on an open connection, else the connect
  // timeout.
  DurationMs failure_delay(std::uint32_t from, std::uint32_t to, UnixMs now) const;
  // The connection from -> to broke (its path was cut, its receiver went
  // down): the next frame opens a new one.
  void close(std::uint32_t from, std::uint32_t to);
  // Every connection from or to `server` broke (its agent stopped).
  void close_all(std::uint32_t server);

  const StreamCounters& counters() const { return counters_; }

 private:
  struct Pipe {
    bool open = false;
    UnixMs ready_ms = 0;         // the handshake completes (frames sent before wait for it)
    UnixMs last_sent_ms = 0;     // idle timeout counts from here
    UnixMs last_arrival_ms = 0;  // in order: no frame arrives before the one sent before it
  };
  std::optional<UnixMs> handshake(std::uint32_t from, std::uint32_t to, UnixMs now, Rng& rng);
  // Extra delay of one segment: a retransmission timeout, doubling, for
  // each time it is lost; nullopt when it is lost on every try.
  std::optional<DurationMs> segment_wait(std::uint32_t from, std::uint32_t to, Rng& rng);

  const Network& network_;
  std::unordered_map<std::uint64_t, Pipe> pipes_;  // by from << 32 | to: only pairs that talked
  StreamCounters counters_;
  UnixMs failed_at_ = 0;
};

}  // namespace mesh::sim
