// Plumtree peer state (Leitão, Pereira, Rodrigues 2007; docs/PROTOCOL.md, Gossip,
// "Dissemination"), with one broadcast tree per origin: for each origin the
// eager peers get full bodies of its records at once, everyone else hears of
// them by IHAVE only. Every tree starts as the whole overlay and is pruned
// to a spanning tree by the first record's duplicates; because one origin's
// records are minutes apart, concurrent records of other origins cannot
// over-prune it (which a single shared tree suffers from). And the table of
// records heard of by IHAVE but not yet received, with the announcers to
// GRAFT when the wait runs out.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "common/time.h"
#include "common/rng.h"
#include "gossip/wire.h"
#include "record/envelope.h"
#include "record/roster.h"

namespace mesh::gossip {

// Tree slots: one per report origin (its roster index), and one for the
// roster (slot = number of servers). A tree is a bit mask over this node's
// links (its overlay neighbours, then any other peer a tree took in), so a
// node holds N + 1 words of tree state, not N + 1 lists.
class PeerSets {
 public:
  // At most this many links; a peer beyond them is never made eager (it
  // still gets IHAVE and SYNC repair).
  static constexpr std::size_t kLinksMax = 64;

  // Builds the overlay of `roster` and resets every tree to it. The overlay
  // is a function of the roster alone, so both ends of a link agree on it
  // with no handshake: the union of `rings` rings, ring r ordering the
  // members by BLAKE2b(context, id, r). Every member has degree 2 * rings
  // (less where rings share an edge): no member carries more trees than
  // another, and a union of random rings is an expander, so the diameter
  // stays near log(N) / log(2 * rings - 1).
  // REQUIRES: 1 <= rings <= kLinksMax / 2.
  void reset(const Roster& roster, std::optional<std::uint32_t> self, std::size_t rings);

  std::size_t slot_count() const { return trees_.size(); }
  std::size_t slot_of(RecordKind kind, std::uint32_t origin) const;
  bool is_peer(std::uint32_t index) const { return index < peer_.size() && peer_[index]; }
  // This node's overlay links, ascending.
  const std::vector<std::uint32_t>& neighbours() const { return neighbours_; }
  // Every member but this node, ascending.
  const std::vector<std::uint32_t>& peers() const { return peers_; }
  // The active links (IHAVE and keepalives go to them): the overlay
  // neighbours at reset; overlay repair takes dead ones out and stand-ins
  // in. REQUIRES: is_peer(peer). False when `peer` is not a link and
  // kLinksMax links are taken.
  bool set_active(std::uint32_t peer, bool active);
  bool is_active(std::uint32_t peer) const;
  // Makes `peer` eager (true) or lazy in every tree.
  bool set_all_trees(std::uint32_t peer, bool eager);
  template <class F>
  void for_each_active(F&& fn) const {
    for (std::uint64_t bits = active_; bits != 0; bits &= bits - 1) {
      fn(links_[static_cast<std::size_t>(__builtin_ctzll(bits))]);
    }
  }

  // The tree of `slot`: the peers that get full bodies of its records, in
  // link order (neighbours ascending, then others as they joined).
  template <class F>
  void for_each_eager(std::size_t slot, F&& fn) const {
    for (std::uint64_t bits = tree(slot); bits != 0; bits &= bits - 1) {
      fn(links_[static_cast<std::size_t>(__builtin_ctzll(bits))]);
    }
  }
  // The active links outside the tree of `slot` (Plumtree's lazy peers).
  template <class F>
  void for_each_lazy_neighbour(std::size_t slot, F&& fn) const {
    for (std::uint64_t bits = active_ & ~tree(slot); bits != 0; bits &= bits - 1) {
      fn(links_[static_cast<std::size_t>(__builtin_ctzll(bits))]);
    }
  }
  // The same peers, ascending.
  std::vector<std::uint32_t> eager(std::size_t slot) const;
  bool is_eager(std::size_t slot, std::uint32_t peer) const;
  // REQUIRES: is_peer(peer), slot < slot_count(). Idempotent. False when the
  // peer is not a link and kLinksMax links are taken, every one active or in
  // a tree (an idle link's slot is reused).
  bool make_eager(std::size_t slot, std::uint32_t peer);
  void make_lazy(std::size_t slot, std::uint32_t peer);

  // Draws the SYNC partners: the overlay neighbours plus up to `extra`
  // other peers uniformly at random. Called after reset(); the set stays
  // fixed until the next roster, so a node keeps link keys with about
  // degree + 2·extra peers instead of every member (docs/PROTOCOL.md, Gossip, §5).
  void choose_sync_partners(std::size_t extra, Rng& rng);
  const std::vector<std::uint32_t>& sync_partners() const { return sync_partners_; }

  // One SYNC partner uniformly at random; nullopt with none.
  std::optional<std::uint32_t> random_sync_partner(Rng& rng) const;

 private:
  std::uint64_t tree(std::size_t slot) const;
  std::optional<std::size_t> link_of(std::uint32_t peer) const;
  // A link slot for a new peer: appended, or, at kLinksMax, the slot of a
  // link that is neither active nor in any tree; nullopt when none is free.
  std::optional<std::size_t> claim_link(std::uint32_t peer);

  std::vector<bool> peer_;                    // by roster index: a member other than self
  std::vector<std::uint32_t> peers_;          // every peer, ascending
  std::vector<std::uint32_t> neighbours_;     // overlay links, ascending
  std::vector<std::uint32_t> links_;          // neighbours_, then peers trees took in
  std::vector<std::uint32_t> sync_partners_;  // neighbours + random extras, ascending
  std::vector<std::uint64_t> trees_;          // by slot: bit i = links_[i] is eager
  std::uint64_t active_ = 0;                  // bit i = links_[i] is an active link
};

class MissingTable {
 public:
  // GRAFTs sent for one missing record, cycling through its announcers,
  // before it is left to SYNC.
  static constexpr std::uint32_t kGraftAttemptsMax = 6;

  // `from` announced `entry` (which we lack). Tracks the highest seq per
  // (kind, origin) with up to `announcers_max` announcers; the first GRAFT is
  // due at now + timeout. False when the table is full (`capacity`).
  bool announced(const Entry& entry, std::uint32_t from, UnixMs now, DurationMs timeout,
                 std::size_t capacity, std::size_t announcers_max);
  // A record (kind, origin, seq) arrived: forget what it satisfies. True when
  // we had GRAFTed for it (the record then travels on eagerly). `holders`,
  // when given, gets the peers that announced it or a newer one: they hold
  // it, and need no IHAVE for it.
  bool resolved(RecordKind kind, std::uint32_t origin, std::uint64_t seq,
                std::vector<std::uint32_t>* holders = nullptr);
  // Entries whose wait ran out, each with the announcer to GRAFT now (the
  // announcers in turn); each gets its next deadline, or is forgotten after
  // kGraftAttemptsMax GRAFTs.
  std::vector<std::pair<std::uint32_t, Entry>> due(UnixMs now, DurationMs timeout);
  void clear() { missing_.clear(); }
  std::size_t size() const { return missing_.size(); }

 private:
  struct Missing {
    std::uint64_t seq = 0;
    UnixMs deadline_ms = 0;
    std::vector<std::uint32_t> announcers;  // GRAFT candidates, asked in turn
    std::uint32_t attempts = 0;             // GRAFTs sent
    bool grafted = false;
  };
  std::map<std::pair<RecordKind, std::uint32_t>, Missing> missing_;
};

}  // namespace mesh::gossip
