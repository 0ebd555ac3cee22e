#include "gossip/peers.h"

#include <algorithm>

namespace mesh::gossip {

void PeerSets::reset(const Roster& roster, std::optional<std::uint32_t> self,
                     const Roster* old_roster, Rng& rng, std::size_t eager_fanout) {
  std::vector<std::uint8_t> state(roster.servers.size(), kLazy);
  if (self) state[*self] = kNone;
  std::size_t eager_count = 0;
  if (old_roster != nullptr) {
    for (std::uint32_t i = 0; i < state.size(); ++i) {
      const auto old_index = old_roster->index_of(roster.servers[i].id);
      if (state[i] == kLazy && old_index && is_eager(*old_index)) {
        state[i] = kEager;
        ++eager_count;
      }
    }
  }
  state_ = std::move(state);
  peers_.clear();
  for (std::uint32_t i = 0; i < state_.size(); ++i) {
    if (state_[i] != kNone) peers_.push_back(i);
  }
  while (eager_count < eager_fanout && eager_count < peers_.size()) {
    const std::uint32_t pick = peers_[rng.below(peers_.size())];
    if (state_[pick] == kLazy) {
      state_[pick] = kEager;
      ++eager_count;
    }
  }
}

void PeerSets::make_eager(std::uint32_t index) {
  MESH_CHECK(is_peer(index), "make_eager of a non-peer");
  state_[index] = kEager;
}

void PeerSets::make_lazy(std::uint32_t index) {
  MESH_CHECK(is_peer(index), "make_lazy of a non-peer");
  state_[index] = kLazy;
}

std::vector<std::uint32_t> PeerSets::eager() const {
  std::vector<std::uint32_t> out;
  for (std::uint32_t index : peers_) {
    if (state_[index] == kEager) out.push_back(index);
  }
  return out;
}

std::vector<std::uint32_t> PeerSets::sample_lazy(std::size_t count, Rng& rng) const {
  std::vector<std::uint32_t> lazy;
  for (std::uint32_t index : peers_) {
    if (state_[index] == kLazy) lazy.push_back(index);
  }
  // Partial Fisher-Yates: the first `count` slots become the sample.
  const std::size_t take = std::min(count, lazy.size());
  for (std::size_t i = 0; i < take; ++i) {
    std::swap(lazy[i], lazy[i + rng.below(lazy.size() - i)]);
  }
  lazy.resize(take);
  return lazy;
}

std::optional<std::uint32_t> PeerSets::random_peer(Rng& rng) const {
  if (peers_.empty()) return std::nullopt;
  return peers_[rng.below(peers_.size())];
}

bool MissingTable::announced(const Entry& entry, std::uint32_t from, UnixMs now,
                             DurationMs timeout, std::size_t capacity,
                             std::size_t announcers_max) {
  const auto key = std::make_pair(entry.kind, entry.origin);
  auto it = missing_.find(key);
  if (it == missing_.end()) {
    if (missing_.size() >= capacity) return false;
    it = missing_.emplace(key, Missing{entry.seq, now + timeout, {}, false}).first;
  } else if (entry.seq > it->second.seq) {
    it->second = Missing{entry.seq, now + timeout, {}, false};
  } else if (entry.seq < it->second.seq) {
    return true;  // an older announcement: the newer one is already awaited
  }
  auto& announcers = it->second.announcers;
  if (announcers.size() < announcers_max &&
      std::find(announcers.begin(), announcers.end(), from) == announcers.end()) {
    announcers.push_back(from);
  }
  return true;
}

bool MissingTable::resolved(RecordKind kind, std::uint32_t origin, std::uint64_t seq) {
  auto it = missing_.find(std::make_pair(kind, origin));
  if (it == missing_.end() || it->second.seq > seq) return false;
  const bool grafted = it->second.grafted;
  missing_.erase(it);
  return grafted;
}

std::vector<std::pair<std::uint32_t, Entry>> MissingTable::due(UnixMs now, DurationMs timeout) {
  std::vector<std::pair<std::uint32_t, Entry>> out;
  for (auto it = missing_.begin(); it != missing_.end();) {
    Missing& missing = it->second;
    if (missing.deadline_ms > now) {
      ++it;
      continue;
    }
    if (missing.announcers.empty()) {
      it = missing_.erase(it);  // nobody left to ask: SYNC repairs it
      continue;
    }
    out.emplace_back(missing.announcers.front(),
                     Entry{it->first.first, it->first.second, missing.seq, 0});
    missing.announcers.erase(missing.announcers.begin());
    missing.grafted = true;
    missing.deadline_ms = now + timeout;
    ++it;
  }
  return out;
}

}  // namespace mesh::gossip
