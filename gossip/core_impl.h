// Internal: the state behind GossipCore (core.h). Split over core.cc (API,
// records, dissemination), core_receive.cc (frames in) and core_tick.cc
// (timers, SYNC, frames out). Not part of the public API.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "gossip/core.h"
#include "gossip/link.h"
#include "gossip/link_watch.h"
#include "gossip/outbox.h"
#include "gossip/peers.h"
#include "common/rng.h"
#include "gossip/store.h"
#include "gossip/wire.h"

namespace mesh::gossip {

// How a newly stored record travels on.
enum class Spread {
  push,      // full body along the origin's tree (not back to the sender), IHAVE to the lazy neighbours
  announce,  // IHAVE only, to every neighbour (records learnt by SYNC)
  none,      // loaded from storage: SYNC spreads it if needed
};

class GossipCore::Impl {
 public:
  Impl(CoreConfig config, std::uint64_t seed, SharedWork shared);

  Effects load(std::span<const Bytes> stored_records, UnixMs now);
  Result<Effects, RecordError> publish(ByteView raw_record, UnixMs now);
  Effects on_message(ByteView frame, UnixMs now);
  Effects on_tick(UnixMs now);

  // Shared by the three files.
  CoreConfig config_;
  Rng rng_;
  SodiumVerifier sodium_verifier_;
  PlainRosterDecoder plain_rosters_;
  PlainInterner plain_records_;
  Counters counters_;
  RecordStore store_;
  LinkCrypto link_;
  PeerSets peers_;
  MissingTable missing_;
  LinkWatch watch_;
  Outbox outbox_;
  std::optional<std::uint32_t> self_index_;
  // (peer, entry): IHAVEs for the next announce batch.
  std::vector<std::pair<std::uint32_t, Entry>> announce_;
  // (peer, entry): peers that told us since the last batch that they hold a
  // record (they announced it, before or after it reached us). The batch
  // sends them no IHAVE for it or an older one (docs/PROTOCOL.md §4).
  std::vector<std::pair<std::uint32_t, Entry>> held_by_peer_;
  std::vector<std::uint32_t> holders_;  // scratch for MissingTable::resolved
  std::map<PublicKey, UnixMs> roster_offered_ms_;  // peer -> when we last sent it our roster
  UnixMs roster_requested_ms_ = -1;
  // By tree slot: the peer whose PUSH brought the record we hold, if it came
  // that way. A duplicate PUSH prunes only when the held copy came down the
  // tree from another peer: a copy from SYNC or GRAFT says nothing about
  // which tree edge is redundant, and pruning then could cut our only link.
  std::vector<std::optional<std::uint32_t>> pushed_by_;
  std::optional<UnixMs> next_sync_ms_;
  // SYNC rounds open with the full SYNC list rather than a SUMMARY until
  // then: the first round, and for sync_full_for_ms after any sign that
  // records go astray (a record that came by a SYNC round's REPAIR, not
  // in answer to our GRAFT; a settled record sent in answer to SYNC).
  // docs/PROTOCOL.md §5.
  std::optional<UnixMs> sync_full_until_;
  void note_repair(UnixMs now) { sync_full_until_ = now + config_.sync_full_for_ms; }
  // By roster index: when we last answered that peer's SUMMARY (-1: never).
  std::vector<UnixMs> summary_answered_ms_;
  // By roster index: when we last caught that peer up (-1: never). A peer
  // is caught up at most once per half SYNC round, however often it claims
  // a new boot.
  std::vector<UnixMs> caught_up_ms_;
  Bytes plaintext_;  // the frame being applied (its bodies view into it); capacity reused
  UnixMs next_announce_ms_ = 0;

  // core.cc
  // An accepted record and its entry (kind, origin index, seq).
  struct Stored {
    std::shared_ptr<const StoredRecord> record;
    Entry entry;
  };
  Result<Stored, RecordError> store_record(ByteView raw, UnixMs now, Effects& effects,
                                           AcceptNote* note);
  static PersistRecord persist_record(const Stored& stored);
  void on_roster_changed();
  void spread(const Stored& stored, std::optional<std::uint32_t> from, Spread how);
  void queue_body(std::uint32_t peer, RecordKind kind, std::uint32_t origin, bool repair);
  std::vector<Entry> held_entries() const;
  std::optional<std::uint32_t> index_of_key(const PublicKey& key) const;

  // core_receive.cc
  // `restarted`: the frame is the sender's first since it restarted.
  void apply(const PublicKey& sender, FrameContent content, bool restarted, UnixMs now,
             Effects& effects);
  void apply_versions(std::uint32_t from, std::uint64_t their_version, UnixMs now);
  void apply_prunes(std::uint32_t from, const std::vector<Entry>& prunes, bool same_version);
  void apply_grafts(std::uint32_t from, const std::vector<Entry>& grafts, bool same_version);
  // `from`: the sender's index, updated when a body changes the roster.
  void apply_body(const PublicKey& sender, std::optional<std::uint32_t>& from, const Body& body,
                  UnixMs now, Effects& effects);
  void apply_ihave(std::uint32_t from, const std::vector<Entry>& entries, bool same_version,
                   UnixMs now);
  void apply_summary(std::uint32_t from, const Summary& summary, UnixMs now);
  // `peer` holds `entry`'s record (or a newer one): held_by_peer_, bounded
  // like the announce queue.
  void note_held(std::uint32_t peer, const Entry& entry) {
    if (held_by_peer_.size() < config_.announce_queue_max) held_by_peer_.emplace_back(peer, entry);
  }
  void apply_sync(std::uint32_t from, const std::vector<Entry>& digest, UnixMs now);
  void apply_sync_reply(std::uint32_t from, const std::vector<Entry>& wanted, UnixMs now);
  // A held record old enough for SYNC to repair (CoreConfig::sync_settle_ms).
  bool settled(const StoredRecord& held, UnixMs now) const;

  // core_tick.cc
  void tick_grafts(UnixMs now);
  void tick_sync(UnixMs now);
  void tick_announce(UnixMs now);
  // Overlay repair: dead links out, stand-ins in, keepalives on quiet links.
  void tick_links(UnixMs now);
  // A frame from `from` arrived: it is alive (a dead neighbour revives; its
  // stand-in retires), and an empty frame (a keepalive) is answered when we
  // sent it nothing lately. A link back from a restart or a dead spell is
  // caught up (catch_up). True when a dead link revived.
  bool heard_from(std::uint32_t from, bool keepalive, bool restarted, UnixMs now);
  // IHAVE to `peer` for the records it may have missed while we did not hear
  // from it (since `last_heard`).
  void catch_up(std::uint32_t peer, UnixMs last_heard, UnixMs now);
  void flush(Effects& effects, UnixMs now);
};

}  // namespace mesh::gossip
