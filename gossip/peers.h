// Plumtree peer state (Leitão, Pereira, Rodrigues 2007; docs/GOSSIP.md,
// "Dissemination"): every other roster member is either an eager peer (gets
// full bodies at once: the edges of the broadcast tree) or a lazy peer (gets
// IHAVE announcements only). And the table of records heard of by IHAVE but
// not yet received, with the announcers to GRAFT when the wait runs out.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "common/time.h"
#include "gossip/rng.h"
#include "gossip/wire.h"
#include "record/roster.h"

namespace mesh::gossip {

class PeerSets {
 public:
  // Rebuilds for `roster` (self excluded). Members that were eager under
  // `old_roster` stay eager (matched by id); the rest are lazy; then random
  // lazy peers are promoted until `eager_fanout` are eager (or none is left).
  void reset(const Roster& roster, std::optional<std::uint32_t> self, const Roster* old_roster,
             Rng& rng, std::size_t eager_fanout);

  bool is_peer(std::uint32_t index) const { return index < state_.size() && state_[index] != kNone; }
  bool is_eager(std::uint32_t index) const { return index < state_.size() && state_[index] == kEager; }
  // REQUIRES: is_peer(index). Idempotent.
  void make_eager(std::uint32_t index);
  void make_lazy(std::uint32_t index);

  std::vector<std::uint32_t> eager() const;  // ascending
  // Up to `count` distinct lazy peers, uniformly at random.
  std::vector<std::uint32_t> sample_lazy(std::size_t count, Rng& rng) const;
  // One peer (eager or lazy) uniformly at random; nullopt with no peers.
  std::optional<std::uint32_t> random_peer(Rng& rng) const;

 private:
  static constexpr std::uint8_t kNone = 0, kLazy = 1, kEager = 2;
  std::vector<std::uint8_t> state_;  // by roster index
  std::vector<std::uint32_t> peers_;  // every index with state != kNone, ascending
};

class MissingTable {
 public:
  // `from` announced `entry` (which we lack). Tracks the highest seq per
  // (kind, origin) with up to `announcers_max` announcers; the first GRAFT is
  // due at now + timeout. False when the table is full (`capacity`).
  bool announced(const Entry& entry, std::uint32_t from, UnixMs now, DurationMs timeout,
                 std::size_t capacity, std::size_t announcers_max);
  // A record (kind, origin, seq) arrived: forget what it satisfies. True when
  // we had GRAFTed for it (the record then travels on eagerly).
  bool resolved(RecordKind kind, std::uint32_t origin, std::uint64_t seq);
  // Entries whose wait ran out, each with the announcer to GRAFT now; each
  // gets its next deadline, or is forgotten when no announcer is left.
  std::vector<std::pair<std::uint32_t, Entry>> due(UnixMs now, DurationMs timeout);
  void clear() { missing_.clear(); }
  std::size_t size() const { return missing_.size(); }

 private:
  struct Missing {
    std::uint64_t seq = 0;
    UnixMs deadline_ms = 0;
    std::vector<std::uint32_t> announcers;  // GRAFT candidates, in arrival order
    bool grafted = false;
  };
  std::map<std::pair<RecordKind, std::uint32_t>, Missing> missing_;
};

}  // namespace mesh::gossip
