// LinkWatch: which overlay links are alive, and which peers stand in for the
// dead ones (docs/PROTOCOL.md, Gossip, "Overlay repair"). Pure bookkeeping
// over roster indices; the core acts on what it reports.
//
// A link is alive while an authenticated frame arrived from the peer within
// dead_after_ms (every link carries a keepalive when nothing else went over
// it for keepalive_ms, so a quiet link is not a dead one), and until the
// transport reports its path failed: a link whose frames time out is dead
// at the next tick, without waiting out the silence. A dead overlay
// neighbour gets a stand-in: the first peer of a fixed random order (drawn
// from the core's seed at each roster) that is neither a neighbour, nor a
// stand-in already, nor known dead or failed lately, preferring peers heard
// from recently, as HyParView refills its active view from its passive view.
// A neighbour heard from again is alive again and its stand-in is retired,
// unless its path failed within dead_after_ms and neither did it restart
// nor has the transport found a working path to it since: a path that
// carries the peer's frames to us but not ours to it stays dead instead of
// flapping, and a path that heals revives at the first frame. At most one
// stand-in per neighbour: the active links never exceed twice the overlay
// degree.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "common/rng.h"
#include "common/time.h"

namespace mesh::gossip {

class LinkWatch {
 public:
  struct Changes {
    std::vector<std::uint32_t> died;                               // neighbours found dead
    std::vector<std::pair<std::uint32_t, std::uint32_t>> stand_ins;  // (dead neighbour, new stand-in)
    std::vector<std::uint32_t> retired;                            // stand-ins no longer needed
    bool empty() const { return died.empty() && stand_ins.empty() && retired.empty(); }
  };

  // A new overlay: `neighbours` among `peers` (roster indices, ascending) in
  // a roster of `servers`. Every link counts as heard at the first tick.
  void reset(const std::vector<std::uint32_t>& neighbours, const std::vector<std::uint32_t>& peers,
             std::uint32_t servers, Rng& rng);

  // An authenticated frame from `peer`. A dead neighbour revives, and its
  // stand-in (if it had one) is retired, when its path has not failed
  // within dead_after_ms or when the frame is the first of its new boot
  // (`restarted`: what failed was most likely the machine, now back).
  struct Heard {
    bool revived = false;                  // a dead overlay neighbour is alive again
    std::optional<std::uint32_t> retired;  // its stand-in, no longer needed
  };
  Heard heard(std::uint32_t peer, UnixMs now, DurationMs dead_after_ms, bool restarted = false);
  void sent(std::uint32_t peer, UnixMs now);
  // The transport could not reach `peer`: a connection to it timed out,
  // or frames written to it went unacknowledged (docs/PROTOCOL.md §4a,
  // "Failed"). An active link (a live neighbour or a stand-in) is found
  // dead at the next tick, and stays dead for dead_after_ms whatever is heard.
  void failed(std::uint32_t peer, UnixMs now);
  // The transport has a working path to `peer` again (a connection it
  // opened, or the peer's own connection it may write on): the failure
  // reported before no longer holds the link dead.
  void path_up(std::uint32_t peer, UnixMs now);
  // True when an empty frame from `peer` should be answered with one: we
  // sent it nothing for keepalive_ms (so a stand-in that took us in hears
  // from us, and we from it, even when no record flows).
  bool answer_due(std::uint32_t peer, UnixMs now, DurationMs keepalive_ms) const {
    return peer < state_.size() && now - state_[peer].last_sent_ms >= keepalive_ms;
  }

  // Finds the neighbours (and stand-ins) silent for longer than
  // dead_after_ms and finds stand-ins for the dead neighbours.
  Changes tick(UnixMs now, DurationMs dead_after_ms);

  // Links due a keepalive: active links silent (from us) for keepalive_ms,
  // dead neighbours for dead_after_ms (so that both ends notice a revival).
  std::vector<std::uint32_t> keepalives_due(UnixMs now, DurationMs keepalive_ms,
                                            DurationMs dead_after_ms) const;

  // When an authenticated frame last came from `peer` (the first tick for a
  // link not heard since the roster).
  UnixMs last_heard_ms(std::uint32_t peer) const {
    return peer < state_.size() ? state_[peer].last_heard_ms : 0;
  }
  bool dead(std::uint32_t peer) const { return peer < state_.size() && state_[peer].dead; }
  bool stand_in(std::uint32_t peer) const { return peer < state_.size() && state_[peer].stand_in; }
  std::size_t dead_count() const;
  std::size_t stand_in_count() const;

 private:
  struct State {
    bool neighbour = false;
    bool stand_in = false;
    bool dead = false;
    UnixMs failed_ms = -1;  // the last failure reported (-1: none)
    std::optional<std::uint32_t> stand_in_for;  // on a dead neighbour: its stand-in
    UnixMs last_heard_ms = 0;
    UnixMs last_sent_ms = 0;
  };
  std::optional<std::uint32_t> pick_stand_in(UnixMs now, DurationMs dead_after_ms) const;
  static bool failed_lately(const State& state, UnixMs now, DurationMs dead_after_ms) {
    return state.failed_ms >= 0 && now - state.failed_ms <= dead_after_ms;
  }
  // A failure reported since the previous tick: tick() acts on it.
  bool failed_since_tick(const State& state) const {
    return state.failed_ms >= 0 && state.failed_ms >= previous_tick_ms_;
  }

  std::vector<State> state_;            // by roster index
  std::vector<std::uint32_t> neighbours_;
  std::vector<std::uint32_t> order_;    // the passive view: peers not neighbours, shuffled
  bool started_ = false;
  UnixMs previous_tick_ms_ = 0;
};

}  // namespace mesh::gossip
