// GossipCore: the sans-IO gossip state machine of one node
// (docs/PROTOCOL.md, Gossip). Events in, effects out: the shell (node/) or the
// simulator (tools/meshsim) feeds it frames, ticks and records with the
// current time, and carries out the returned Effects (send frames, persist
// records, erase records). It never reads a clock, opens a socket, spawns a
// thread or draws randomness other than from the seed it is given.
//
// Thread safety: none. One strand (or one thread) owns a core.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "common/bytes.h"
#include "common/result.h"
#include "common/server_id.h"
#include "common/time.h"
#include "gossip/config.h"
#include "gossip/counters.h"
#include "gossip/store.h"
#include "gossip/verifier.h"
#include "record/envelope.h"
#include "record/report.h"
#include "record/roster.h"

namespace mesh::gossip {

// BLAKE2b-256 over the held record set (docs/PROTOCOL.md, Gossip, "Digest"). Equal
// record sets give equal digests on every node, whatever the roster indices.
using Digest = std::array<std::uint8_t, 32>;

// One sealed frame for the peer at roster index `to` (index in roster() at
// the time the Effects were returned).
struct Outgoing {
  std::uint32_t to = 0;
  Bytes frame;
};

// A record to store under (kind, origin), replacing the one stored there,
// with what the shell needs to key it (nothing to decode again).
struct PersistRecord {
  RecordKind kind = RecordKind::report;
  std::string_view origin;          // the envelope's origin; points into the held record, valid while `raw` lives
  std::uint32_t origin_index = 0;   // roster index of the origin (0 for the roster)
  std::shared_ptr<const Bytes> raw; // the exact bytes; shared, immutable: the core keeps them too
};

struct Effects {
  std::vector<Outgoing> send;   // at most one frame per peer per call
  std::vector<PersistRecord> persist;  // records accepted from the network or publish()
  std::vector<std::pair<RecordKind, ServerId>> erase;  // stored records to delete
  bool roster_changed = false;  // a new roster was accepted (indices may have moved)
  // Roster indices whose held report changed in this call (accepted from the
  // network, publish() or load()), in the order they changed; an index may
  // repeat. With roster_changed, every index is to be read again.
  std::vector<std::uint32_t> reports_changed;
  // on_message: the roster index of the member that sealed the frame, set
  // once the frame opened (its AEAD held and it was no replay), whatever it
  // carried. The shell may then write to that member on the connection the
  // frame came on (docs/PROTOCOL.md §2a, "Connections").
  std::optional<std::uint32_t> sender;
  // A link came back after a dead spell (docs/PROTOCOL.md §4a, "Revived"),
  // or a dead one was just told to try again (on_path_hint): what cut it
  // has likely healed for other peers too, and the shell may retry at once
  // the connections it is backing off from.
  bool paths_healing = false;

  // Appends `other` to this (keeps order: this first).
  void merge(Effects&& other);
};

// A record held by the core. Pointers are valid until the next non-const call.
struct HeldRecord {
  // envelope->raw: the exact bytes as received. envelope->payload is not
  // kept (it lies inside raw): it is empty.
  const Envelope* envelope = nullptr;
  std::uint32_t origin_index = 0;      // roster index of the origin (0 for the roster itself)
  // Decoded payload for kind report; null for the roster, and for every
  // record when CoreConfig::hold_decoded_reports is false.
  const Report* report = nullptr;
};

class GossipCore {
 public:
  // `seed` drives every random choice (peer sampling, sync timing).
  // `shared`: work a simulator shares among its cores (gossip/store.h,
  // SharedWork); the default is what the daemon uses.
  // REQUIRES: config.self is a valid server id.
  GossipCore(CoreConfig config, std::uint64_t seed, SharedWork shared = {});
  ~GossipCore();
  GossipCore(const GossipCore&) = delete;
  GossipCore& operator=(const GossipCore&) = delete;

  // At start-up, the records read from storage. Each goes through the full
  // acceptance path (rosters first); records refused now (e.g. a report whose
  // origin left the roster) come back in Effects::erase. Effects::persist stays empty.
  Effects load(std::span<const Bytes> stored_records, UnixMs now);

  // A record made here: this node's own report, or an operator roster handed
  // in by meshctl. Same acceptance path as a record from the network; on
  // success it is persisted and disseminated. The error names why it was refused.
  Result<Effects, RecordError> publish(ByteView raw_record, UnixMs now);

  // A frame from the network, as received (the sender is authenticated by the
  // frame itself, so no `from` is taken). Bad frames are dropped and counted
  // and never change stored records. Replies are queued for the next tick;
  // only records to persist/erase come back here.
  Effects on_message(ByteView frame, UnixMs now);

  // The transport could not reach `peer`: a connection to it timed out or
  // frames written to it went unacknowledged (docs/PROTOCOL.md §4a,
  // "Failed"). Its link is found dead at the next tick, as if silent for
  // link_dead_after_ms. Unknown ids and this node's own are ignored.
  void on_link_failed(std::string_view peer, UnixMs now);

  // The transport has a working path to `peer`: a connection it opened was
  // established, or one the peer opened carried its sealed frame and we may
  // write on it (docs/PROTOCOL.md §4a, "Failed"). A failure reported before
  // no longer keeps the link dead: the next frame heard revives it. Unknown
  // ids and this node's own are ignored. A dead link gets an empty frame
  // at the next tick, so that the peer hears us at once.
  void on_link_up(std::string_view peer, UnixMs now);

  // Something other than gossip reached `peer`'s host (a probe got
  // through): when its link is dead, it gets an empty frame at the next
  // tick instead of at the dead window's next keepalive, so a healed path
  // is found within a probe interval. True when that happened.
  bool on_path_hint(std::string_view peer, UnixMs now);

  // Called every tick_interval_ms: IHAVE timeouts (GRAFT), periodic SYNC, and
  // the flush of every peer's queue into at most one frame per peer.
  Effects on_tick(UnixMs now);

  // The accepted roster, or null before one is held.
  const Roster* roster() const;
  // The same roster, shared and immutable: it stays valid after a newer
  // roster replaces it, and a new roster is always a new object (callers
  // may key caches on the pointer while they hold it).
  std::shared_ptr<const Roster> shared_roster() const;
  // This node's index in roster(), or nullopt (no roster, or not a member).
  std::optional<std::uint32_t> self_index() const;
  // Member `id`'s index in roster(), or nullopt. O(1) (Roster::index_of is a scan).
  std::optional<std::uint32_t> index_of(std::string_view id) const;

  Digest digest() const;
  // The SUMMARY of the records held up to `cutoff_ms` (docs/PROTOCOL.md §5).
  std::array<std::uint8_t, 16> summary(UnixMs cutoff_ms) const;
  const Counters& counters() const;

  // Records held: the roster (if any) plus one report per member at most.
  std::size_t record_count() const;
  // The seq held for (kind, origin), or nullopt. The shell numbers its own
  // reports above this after a restart.
  std::optional<std::uint64_t> held_seq(RecordKind kind, std::string_view origin) const;
  // The latest report of the member at `index` in roster(), or null.
  std::optional<HeldRecord> report_of(std::uint32_t index) const;
  // Every held record: the roster first, then reports by roster index.
  void for_each_record(const std::function<void(const HeldRecord&)>& fn) const;

  // This node's overlay links (every tree starts as these), by roster
  // index, ascending. For tests and meshsim.
  std::vector<std::uint32_t> eager_peers() const;
  // The current broadcast-tree peers for records of (kind, origin index):
  // the overlay links minus those PRUNEd, plus those GRAFTed.
  std::vector<std::uint32_t> eager_peers_for(RecordKind kind, std::uint32_t origin) const;
  // The peers this node sends SYNC to: its overlay links plus
  // sync_extra_partners drawn at the last roster change, ascending.
  std::vector<std::uint32_t> sync_partners() const;
  // The members this node holds link session keys with, by roster index,
  // ascending: the peers it has exchanged frames with since the last roster.
  std::vector<std::uint32_t> linked_peers() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mesh::gossip
