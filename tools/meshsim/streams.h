// Gossip frames as TCP carries them (docs/SIMULATOR.md, "Network"): the
// daemon sends every frame to a peer on one connection (docs/PROTOCOL.md
// §2a), so a packet lost on the way is sent again after a retransmission
// timeout and the frame arrives late, in order, instead of being lost. A
// connection is opened on demand with a handshake (whose SYN and SYN-ACK
// can be lost too) and closed after the daemon's idle timeout. Once a
// connection has carried its opener's frame, the receiver adopts it and
// writes on it too (node/peer_link.h): of a pair's two connections, the
// one the smaller id opened carries both ways. Frames vanish only when the
// connection breaks: a block or partition cuts the path, the receiver's
// agent is down, or the loss never relents.
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
  std::uint64_t frames_on_adopted = 0;   // frames sent back on a connection the receiver opened
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
  // Whether the last arrival() opened a new connection (the daemon reports
  // the path up then), and when its handshake completed.
  bool opened_last() const { return opened_last_; }
  UnixMs ready_last() const { return ready_last_; }
  // The same on the connection `to` opened to `from` and `from` adopted
  // (REQUIRES: adopted_open(from, to, now)).
  // nullopt when the loss never relents (failed_at() tells when the daemon gives up).
  std::optional<UnixMs> arrival_adopted(std::uint32_t from, std::uint32_t to, std::size_t bytes,
                                        UnixMs now, Rng& rng);
  // True when `from` may write to `to` on the connection `to` opened: it is
  // open (within the idle timeout) and `from` adopted it.
  bool adopted_open(std::uint32_t from, std::uint32_t to, UnixMs now) const;
  // True when from's own connection to `to` is open (within the idle timeout).
  bool own_open(std::uint32_t from, std::uint32_t to, UnixMs now) const;
  // A frame of `from`'s arrived at `to` on from's own connection: `to`
  // adopts it. True when it had not yet (the daemon reports the path up).
  bool adopt(std::uint32_t from, std::uint32_t to);
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
  // One connection, by (opener, receiver).
  struct Pipe {
    bool open = false;
    bool adopted = false;        // the receiver writes on it too
    UnixMs ready_ms = 0;         // the handshake completes (frames sent before wait for it)
    UnixMs last_sent_ms = 0;     // idle timeout counts from here (frames either way)
    UnixMs last_arrival_ms = 0;  // in order: no frame arrives before the one sent before it
    UnixMs last_arrival_back_ms = 0;  // the same, receiver to opener
  };
  bool is_open(const Pipe& pipe, UnixMs now) const;
  // A frame's arrival over an open pipe, from -> to: segments, loss, order.
  std::optional<UnixMs> carry(Pipe& pipe, UnixMs& last_arrival, std::uint32_t from, std::uint32_t to,
                              std::size_t bytes, UnixMs depart, UnixMs now, Rng& rng);
  std::optional<UnixMs> handshake(std::uint32_t from, std::uint32_t to, UnixMs now, Rng& rng);
  // Extra delay of one segment: a retransmission timeout, doubling, for
  // each time it is lost; nullopt when it is lost on every try.
  std::optional<DurationMs> segment_wait(std::uint32_t from, std::uint32_t to, Rng& rng);

  const Network& network_;
  std::unordered_map<std::uint64_t, Pipe> pipes_;  // by from << 32 | to: only pairs that talked
  StreamCounters counters_;
  UnixMs failed_at_ = 0;
  bool opened_last_ = false;
  UnixMs ready_last_ = 0;
};

}  // namespace mesh::sim
