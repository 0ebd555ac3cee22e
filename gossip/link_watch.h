// LinkWatch: which overlay links are alive, and which peers stand in for the
// dead ones (docs/PROTOCOL.md, Gossip, "Overlay repair"). Pure bookkeeping
// over roster indices; the core acts on what it reports.
//
// A link is alive while an authenticated frame arrived from the peer within
// dead_after_ms (every link carries a keepalive when nothing else went over
// it for keepalive_ms, so a quiet link is not a dead one). A dead overlay
// neighbour gets a stand-in: the first peer of a fixed random order (drawn
// from the core's seed at each roster) that is neither a neighbour, nor a
// stand-in already, nor known dead, preferring peers heard from recently, as
// HyParView refills its active view from its passive view. A neighbour heard
// from again is alive again and its stand-in is retired. At most one
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
  // stand-in (if it had one) is retired.
  struct Heard {
    bool revived = false;                  // a dead overlay neighbour is alive again
    std::optional<std::uint32_t> retired;  // its stand-in, no longer needed
  };
  Heard heard(std::uint32_t peer, UnixMs now);
  void sent(std::uint32_t peer, UnixMs now);
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
    std::optional<std::uint32_t> stand_in_for;  // on a dead neighbour: its stand-in
    UnixMs last_heard_ms = 0;
    UnixMs last_sent_ms = 0;
  };
  std::optional<std::uint32_t> pick_stand_in(UnixMs now, DurationMs dead_after_ms) const;

  std::vector<State> state_;            // by roster index
  std::vector<std::uint32_t> neighbours_;
  std::vector<std::uint32_t> order_;    // the passive view: peers not neighbours, shuffled
  bool started_ = false;
};

}  // namespace mesh::gossip
