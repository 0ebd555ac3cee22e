// Tunables and named maxima of the gossip core (docs/PROTOCOL.md, Gossip, "Limits").
// Every queue, frame and list the core handles is bounded by one of these;
// what happens at the bound (drop and count) is stated next to it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/server_id.h"
#include "common/time.h"
#include "record/envelope.h"
#include "record/keys.h"
#include "record/roster.h"

namespace mesh::gossip {

// A frame must carry at least one record of the largest size on its own.
inline constexpr std::size_t kFrameOverheadBytesMax = 1024;
inline constexpr std::size_t kFrameBytesMax = kRecordBytesMax + kFrameOverheadBytesMax;
// Entries in one IHAVE / GRAFT / SYNC / SYNC_REPLY list: one per record a
// node can hold (every roster member's report plus the roster).
inline constexpr std::size_t kEntriesPerListMax = kRosterServersMax + 1;
// Messages in one frame.
inline constexpr std::size_t kMessagesPerFrameMax = 4096;

struct CoreConfig {
  ServerId self;                  // this node's id in the roster
  SecretKey node_key;             // this node's Ed25519 key (signs its reports, seals links)
  PublicKey operator_key{};       // the only key a roster is accepted from
  std::uint64_t boot_counter = 0; // from storage, +1 at every start: nonces never repeat

  // false: a report's payload is decoded and checked at acceptance as
  // always, then the decoded form is dropped and HeldRecord::report is null.
  // For a simulator's nodes whose verdicts are never read: a decoded report
  // is ~10x its encoding, and N nodes each holding N of them dominate memory.
  bool hold_decoded_reports = true;

  // Timing (all driven by the `now` the shell passes in).
  DurationMs tick_interval_ms = 1'000;    // the shell calls on_tick this often
  // Missing after an IHAVE this long -> GRAFT. One tick: a tree peer's push
  // and a lazy peer's IHAVE leave at the same tick, so a body not there a
  // tick after the IHAVE was lost (docs/PROTOCOL.md §4, "Why one tick").
  DurationMs ihave_timeout_ms = 1'000;
  // IHAVE batches leave this often. Every tick: IHAVE is the repair path of
  // a lost push or a dead tree edge, and with reports on change a batch
  // rarely holds more than one record, so waiting saved little and cost
  // the tail of dissemination under loss and blocks.
  DurationMs announce_interval_ms = 1'000;
  DurationMs sync_interval_ms = 30'000;   // one SYNC digest to a random SYNC partner this often
  // SYNC repairs only records at least this old (by their own timestamp):
  // a younger one is most likely still on its way down its tree, and a SYNC
  // copy takes it off the tree (a record that came by SYNC is only
  // announced); IHAVE and GRAFT repair a young record meanwhile. 5 s is
  // past the mean dissemination (4 rounds); docs/PROTOCOL.md §5 has the
  // measurements that chose it.
  DurationMs sync_settle_ms = 5'000;
  // A SYNC round opens with a 16-byte SUMMARY of the records up to the
  // settle cutoff, answered by the full SYNC list only when the sets differ;
  // but with the full list at once for this long after a sign that records
  // go astray (a record that came by SYNC, a settled record a peer lacked): a
  // node losing records then gets them in one round trip, not two
  // (docs/PROTOCOL.md §5 has the measurements).
  DurationMs sync_full_for_ms = 300'000;
  DurationMs roster_offer_interval_ms = 10'000;  // resend our roster to a lagging peer at most this often

  // Dissemination (Plumtree, one tree per origin over the overlay).
  // overlay_rings: rings in the overlay (see PeerSets::reset); every node's
  // overlay degree, and so every tree's starting degree, is 2 * overlay_rings.
  std::size_t overlay_rings = 2;
  // SYNC partners beyond the overlay neighbours, drawn at random at each
  // roster change: shortcuts for repair across a broken overlay region,
  // while every peer a node talks to stays within a bounded set.
  std::size_t sync_extra_partners = 4;
  // Overlay repair (gossip/link_watch.h): a link whose path the transport
  // reports failed (on_link_failed: TCP timed out) is dead at the next tick,
  // and one silent (nothing authenticated from the peer) for
  // link_dead_after_ms is dead too; a stand-in takes its place. A link we
  // sent nothing over for keepalive_interval_ms gets an empty frame, so a
  // quiet link is never taken for a dead one and a cut one fails within
  // keepalive_interval_ms plus the transport's timeout (docs/PROTOCOL.md
  // §4a has the measurements behind 90 s).
  DurationMs link_dead_after_ms = 225'000;
  DurationMs keepalive_interval_ms = 90'000;

  // Batching: one frame per peer per tick, filled up to frame_budget_bytes
  // (a single larger body still goes, alone, up to kFrameBytesMax).
  std::size_t frame_budget_bytes = 64 * 1024;
  // Bytes of bodies queued for one peer; over it new bodies for that peer are
  // dropped and counted (outbox_dropped); SYNC repairs them later.
  std::size_t peer_queue_bytes_max = 4 * 1024 * 1024;
  // Bodies sent in answer to one SYNC or SYNC_REPLY; the rest waits for the next round.
  std::size_t sync_reply_bytes_max = 256 * 1024;
  // (peer, record) IHAVEs waiting for the next batch; over it new ones are
  // dropped and counted (the tree carries the bodies; SYNC repairs the rest).
  std::size_t announce_queue_max = 4 * kEntriesPerListMax;
  // Records we know exist but lack (from IHAVE); over it new ones are ignored and counted.
  std::size_t missing_max = kEntriesPerListMax;
  // Announcers remembered per missing record (GRAFT candidates, tried in order).
  std::size_t announcers_per_missing_max = 4;
};

}  // namespace mesh::gossip
