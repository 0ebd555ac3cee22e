#include "gossip/link_watch.h"

#include <algorithm>
#include <utility>

namespace mesh::gossip {

void LinkWatch::reset(const std::vector<std::uint32_t>& neighbours,
                      const std::vector<std::uint32_t>& peers, std::uint32_t servers, Rng& rng) {
  state_.assign(servers, State{});
  neighbours_ = neighbours;
  for (std::uint32_t n : neighbours) state_[n].neighbour = true;
  order_.clear();
  for (std::uint32_t p : peers) {
    if (!state_[p].neighbour) order_.push_back(p);
  }
  for (std::size_t i = order_.size(); i > 1; --i) std::swap(order_[i - 1], order_[rng.below(i)]);
  started_ = false;
}

LinkWatch::Heard LinkWatch::heard(std::uint32_t peer, UnixMs now, DurationMs dead_after_ms,
                                  bool restarted) {
  Heard heard;
  if (peer >= state_.size()) return heard;
  State& state = state_[peer];
  state.last_heard_ms = now;
  if (restarted) state.failed_ms = -1;
  if (!state.dead || failed_lately(state, now, dead_after_ms)) return heard;
  state.dead = false;
  heard.revived = state.neighbour;
  heard.retired = std::exchange(state.stand_in_for, std::nullopt);
  if (heard.retired) state_[*heard.retired].stand_in = false;
  return heard;
}

void LinkWatch::sent(std::uint32_t peer, UnixMs now) {
  if (peer < state_.size()) state_[peer].last_sent_ms = now;
}

void LinkWatch::failed(std::uint32_t peer, UnixMs now) {
  if (peer < state_.size()) state_[peer].failed_ms = now;
}

void LinkWatch::path_up(std::uint32_t peer, UnixMs now) {
  // A failure reported at this very instant (a connection that broke as
  // another opened) still stands: only one reported before is lifted.
  if (peer < state_.size() && state_[peer].failed_ms < now) state_[peer].failed_ms = -1;
}

std::optional<std::uint32_t> LinkWatch::pick_stand_in(UnixMs now, DurationMs dead_after_ms) const {
  std::optional<std::uint32_t> fallback;
  for (std::uint32_t p : order_) {
    const State& state = state_[p];
    if (state.stand_in || state.dead || failed_lately(state, now, dead_after_ms)) continue;
    if (now - state.last_heard_ms <= dead_after_ms) return p;  // heard lately: alive
    if (!fallback) fallback = p;
  }
  return fallback;
}

LinkWatch::Changes LinkWatch::tick(UnixMs now, DurationMs dead_after_ms) {
  Changes changes;
  if (!started_) {
    started_ = true;
    for (State& state : state_) state.last_heard_ms = now;
    previous_tick_ms_ = now;
    return changes;
  }
  // Stand-ins found dead are retired; their neighbour gets another below.
  for (std::uint32_t n : neighbours_) {
    State& neighbour = state_[n];
    if (!neighbour.stand_in_for) continue;
    State& stand_in = state_[*neighbour.stand_in_for];
    if (!failed_since_tick(stand_in) && now - stand_in.last_heard_ms <= dead_after_ms) continue;
    stand_in.stand_in = false;
    stand_in.dead = true;  // skipped as a stand-in until heard again
    changes.retired.push_back(*neighbour.stand_in_for);
    neighbour.stand_in_for.reset();
  }
  for (std::uint32_t n : neighbours_) {
    State& neighbour = state_[n];
    if (!neighbour.dead && (failed_since_tick(neighbour) || now - neighbour.last_heard_ms > dead_after_ms)) {
      neighbour.dead = true;
      changes.died.push_back(n);
    }
    if (!neighbour.dead || neighbour.stand_in_for) continue;
    if (auto pick = pick_stand_in(now, dead_after_ms)) {
      state_[*pick].stand_in = true;
      state_[*pick].dead = false;
      state_[*pick].last_heard_ms = now;  // give it dead_after_ms to answer
      neighbour.stand_in_for = *pick;
      changes.stand_ins.emplace_back(n, *pick);
    }
  }
  previous_tick_ms_ = now;
  return changes;
}

std::vector<std::uint32_t> LinkWatch::keepalives_due(UnixMs now, DurationMs keepalive_ms,
                                                     DurationMs dead_after_ms) const {
  // The links are the neighbours and their stand-ins: O(degree), not O(N).
  std::vector<std::uint32_t> due;
  auto check = [&](std::uint32_t p) {
    const State& state = state_[p];
    const DurationMs every = state.dead ? dead_after_ms : keepalive_ms;
    if (now - state.last_sent_ms >= every) due.push_back(p);
  };
  for (std::uint32_t n : neighbours_) {
    check(n);
    if (state_[n].stand_in_for) check(*state_[n].stand_in_for);
  }
  return due;
}

std::size_t LinkWatch::dead_count() const {
  return static_cast<std::size_t>(
      std::count_if(neighbours_.begin(), neighbours_.end(), [&](std::uint32_t n) { return state_[n].dead; }));
}

std::size_t LinkWatch::stand_in_count() const {
  return static_cast<std::size_t>(
      std::count_if(state_.begin(), state_.end(), [](const State& s) { return s.stand_in; }));
}

}  // namespace mesh::gossip
