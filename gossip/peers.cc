#include "gossip/peers.h"

#include <sodium.h>

#include <algorithm>
#include <iterator>
#include <string_view>

namespace mesh::gossip {

namespace {

std::uint64_t overlay_hash(std::string_view id, std::uint32_t salt) {
  static constexpr char kContext[] = "meshnode-gossip-overlay-v1";
  crypto_generichash_state state;
  crypto_generichash_init(&state, nullptr, 0, 8);
  crypto_generichash_update(&state, reinterpret_cast<const std::uint8_t*>(kContext), sizeof kContext);
  crypto_generichash_update(&state, reinterpret_cast<const std::uint8_t*>(id.data()), id.size());
  std::uint8_t salt_bytes[4] = {static_cast<std::uint8_t>(salt >> 24), static_cast<std::uint8_t>(salt >> 16),
                                static_cast<std::uint8_t>(salt >> 8), static_cast<std::uint8_t>(salt)};
  crypto_generichash_update(&state, salt_bytes, sizeof salt_bytes);
  std::uint8_t out[8];
  crypto_generichash_final(&state, out, sizeof out);
  std::uint64_t value = 0;
  for (std::uint8_t byte : out) value = (value << 8) | byte;
  return value;
}

// The overlay's links as (a, b) roster-index pairs, each once, a < b: the
// union of `rings` rings over the members in BLAKE2b(id, r) order.
std::vector<std::pair<std::uint32_t, std::uint32_t>> overlay_links(const Roster& roster,
                                                                   std::size_t rings) {
  const std::uint32_t n = static_cast<std::uint32_t>(roster.servers.size());
  std::vector<std::pair<std::uint32_t, std::uint32_t>> links;
  std::vector<std::pair<std::uint64_t, std::uint32_t>> order;  // (hash, index)
  for (std::uint32_t r = 0; r < rings && n > 1; ++r) {
    order.clear();
    for (std::uint32_t i = 0; i < n; ++i) order.emplace_back(overlay_hash(roster.servers[i].id, r), i);
    std::sort(order.begin(), order.end());
    for (std::uint32_t p = 0; p < n; ++p) {
      const std::uint32_t a = order[p].second, b = order[(p + 1) % n].second;
      if (a != b) links.emplace_back(std::min(a, b), std::max(a, b));
    }
  }
  std::sort(links.begin(), links.end());
  links.erase(std::unique(links.begin(), links.end()), links.end());
  return links;
}

void insert_sorted(std::vector<std::uint32_t>& list, std::uint32_t value) {
  auto at = std::lower_bound(list.begin(), list.end(), value);
  if (at == list.end() || *at != value) list.insert(at, value);
}

}  // namespace

void PeerSets::reset(const Roster& roster, std::optional<std::uint32_t> self, std::size_t rings) {
  const std::size_t n = roster.servers.size();
  peer_.assign(n, true);
  if (self) peer_[*self] = false;
  peers_.clear();
  for (std::uint32_t i = 0; i < n; ++i) {
    if (peer_[i]) peers_.push_back(i);
  }
  neighbours_.clear();
  if (self) {
    for (const auto& [a, b] : overlay_links(roster, rings)) {
      if (a == *self) insert_sorted(neighbours_, b);
      if (b == *self) insert_sorted(neighbours_, a);
    }
  }
  MESH_CHECK(neighbours_.size() <= kLinksMax, "PeerSets: more rings than kLinksMax / 2");
  links_ = neighbours_;
  const std::uint64_t all =
      links_.size() == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << links_.size()) - 1;
  trees_.assign(n + 1, all);
  active_ = all;
  sync_partners_ = neighbours_;
}

std::optional<std::size_t> PeerSets::claim_link(std::uint32_t peer) {
  if (links_.size() < kLinksMax) {
    links_.push_back(peer);
    return links_.size() - 1;
  }
  // Full: reuse the slot of a link that is neither active nor in any tree
  // (a retired stand-in, a peer every tree pruned), so that repair never
  // runs out of links over a roster's life.
  for (std::size_t i = neighbours_.size(); i < links_.size(); ++i) {
    const std::uint64_t bit = std::uint64_t{1} << i;
    if ((active_ & bit) != 0) continue;
    if (std::any_of(trees_.begin(), trees_.end(), [&](std::uint64_t tree) { return (tree & bit) != 0; })) {
      continue;
    }
    links_[i] = peer;
    return i;
  }
  return std::nullopt;
}

bool PeerSets::is_active(std::uint32_t peer) const {
  const auto link = link_of(peer);
  return link && (active_ >> *link & 1U) != 0;
}

bool PeerSets::set_active(std::uint32_t peer, bool active) {
  MESH_CHECK(is_peer(peer), "set_active of a non-peer");
  auto link = link_of(peer);
  if (!link) {
    if (!active) return true;
    link = claim_link(peer);
    if (!link) return false;
  }
  const std::uint64_t bit = std::uint64_t{1} << *link;
  active_ = active ? (active_ | bit) : (active_ & ~bit);
  return true;
}

bool PeerSets::set_all_trees(std::uint32_t peer, bool eager) {
  for (std::size_t slot = 0; slot < trees_.size(); ++slot) {
    if (!eager) {
      make_lazy(slot, peer);
    } else if (!make_eager(slot, peer)) {
      return false;
    }
  }
  return true;
}

std::size_t PeerSets::slot_of(RecordKind kind, std::uint32_t origin) const {
  const std::size_t roster_slot = trees_.empty() ? 0 : trees_.size() - 1;
  return kind == RecordKind::roster ? roster_slot : std::min<std::size_t>(origin, roster_slot);
}

std::uint64_t PeerSets::tree(std::size_t slot) const {
  MESH_CHECK(slot < trees_.size(), "PeerSets: slot out of range");
  return trees_[slot];
}

std::optional<std::size_t> PeerSets::link_of(std::uint32_t peer) const {
  for (std::size_t i = 0; i < links_.size(); ++i) {
    if (links_[i] == peer) return i;
  }
  return std::nullopt;
}

std::vector<std::uint32_t> PeerSets::eager(std::size_t slot) const {
  std::vector<std::uint32_t> peers;
  for_each_eager(slot, [&](std::uint32_t peer) { peers.push_back(peer); });
  std::sort(peers.begin(), peers.end());
  return peers;
}

bool PeerSets::is_eager(std::size_t slot, std::uint32_t peer) const {
  const auto link = link_of(peer);
  return link && (tree(slot) >> *link & 1) != 0;
}

bool PeerSets::make_eager(std::size_t slot, std::uint32_t peer) {
  MESH_CHECK(is_peer(peer) && slot < trees_.size(), "make_eager of a non-peer");
  auto link = link_of(peer);
  if (!link) {
    link = claim_link(peer);
    if (!link) return false;
  }
  trees_[slot] |= std::uint64_t{1} << *link;
  return true;
}

void PeerSets::make_lazy(std::size_t slot, std::uint32_t peer) {
  MESH_CHECK(is_peer(peer) && slot < trees_.size(), "make_lazy of a non-peer");
  if (const auto link = link_of(peer)) trees_[slot] &= ~(std::uint64_t{1} << *link);
}

namespace {

// Up to `count` distinct values of `pool`, uniformly at random.
std::vector<std::uint32_t> sample_of(const std::vector<std::uint32_t>& pool, std::size_t count,
                                     Rng& rng) {
  std::vector<std::uint32_t> picked;
  if (count * 2 < pool.size()) {
    // Few out of many: draw and redraw repeats (cheaper than copying the pool).
    while (picked.size() < count) {
      const std::uint32_t value = pool[rng.below(pool.size())];
      if (std::find(picked.begin(), picked.end(), value) == picked.end()) picked.push_back(value);
    }
    return picked;
  }
  picked = pool;
  // Partial Fisher-Yates: the first `count` slots become the sample.
  const std::size_t take = std::min(count, picked.size());
  for (std::size_t i = 0; i < take; ++i) {
    std::swap(picked[i], picked[i + rng.below(picked.size() - i)]);
  }
  picked.resize(take);
  return picked;
}

}  // namespace

void PeerSets::choose_sync_partners(std::size_t extra, Rng& rng) {
  sync_partners_ = neighbours_;
  std::vector<std::uint32_t> others;
  std::set_difference(peers_.begin(), peers_.end(), neighbours_.begin(), neighbours_.end(),
                      std::back_inserter(others));
  for (std::uint32_t peer : sample_of(others, extra, rng)) insert_sorted(sync_partners_, peer);
}

std::optional<std::uint32_t> PeerSets::random_sync_partner(Rng& rng) const {
  if (sync_partners_.empty()) return std::nullopt;
  return sync_partners_[rng.below(sync_partners_.size())];
}

bool MissingTable::announced(const Entry& entry, std::uint32_t from, UnixMs now,
                             DurationMs timeout, std::size_t capacity,
                             std::size_t announcers_max) {
  const auto key = std::make_pair(entry.kind, entry.origin);
  auto it = missing_.find(key);
  if (it == missing_.end()) {
    if (missing_.size() >= capacity) return false;
    it = missing_.emplace(key, Missing{entry.seq, now + timeout, {}, 0, false}).first;
  } else if (entry.seq > it->second.seq) {
    it->second = Missing{entry.seq, now + timeout, {}, 0, false};
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

bool MissingTable::resolved(RecordKind kind, std::uint32_t origin, std::uint64_t seq,
                            std::vector<std::uint32_t>* holders) {
  auto it = missing_.find(std::make_pair(kind, origin));
  if (it == missing_.end()) return false;
  if (holders != nullptr && it->second.seq >= seq) {
    holders->insert(holders->end(), it->second.announcers.begin(), it->second.announcers.end());
  }
  if (it->second.seq > seq) return false;
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
    if (missing.announcers.empty() || missing.attempts >= kGraftAttemptsMax) {
      it = missing_.erase(it);  // nobody left to ask: SYNC repairs it
      continue;
    }
    // GRAFT the next announcer; a lost GRAFT or a lost answer is asked again
    // of the announcers in turn (they hold the record), not left to SYNC.
    const std::uint32_t announcer = missing.announcers.front();
    out.emplace_back(announcer, Entry{it->first.first, it->first.second, missing.seq, 0});
    std::rotate(missing.announcers.begin(), missing.announcers.begin() + 1, missing.announcers.end());
    ++missing.attempts;
    missing.grafted = true;
    missing.deadline_ms = now + timeout;
    ++it;
  }
  return out;
}

}  // namespace mesh::gossip
