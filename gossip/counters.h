// What the gossip core counted: every accepted record, every duplicate and
// every drop reason separately (docs/PROTOCOL.md, Gossip, "Counters"). Plain integers,
// monotonic for the life of one core.
#pragma once

#include <cstdint>

namespace mesh::gossip {

#define MESH_GOSSIP_COUNTERS(X)                                                         \
  /* records (bodies from the network, publish() and load()) */                        \
  X(records_accepted)          /* new or newer record stored */                         \
  X(records_duplicate)         /* exactly the record already held */                   \
  X(records_stale)             /* older seq than held, or equal seq losing the tie-break */ \
  X(records_equivocation_won)  /* equal seq, different bytes, smaller bytes: replaced */ \
  X(records_oversize)                                                                   \
  X(records_malformed)         /* envelope does not decode */                           \
  X(records_unknown_kind)                                                               \
  X(records_unknown_origin)    /* roster not from "operator", report origin not a member */ \
  X(records_future)            /* timestamp beyond now + max_clock_skew_ms */           \
  X(records_bad_signature)                                                              \
  X(records_invalid_payload)   /* roster or report payload refused by its decoder */    \
  X(records_no_roster)         /* a report while no roster is held */                   \
  X(records_erased)            /* reports dropped because their origin left the roster */ \
  /* frames */                                                                          \
  X(frames_received)                                                                    \
  X(frames_sent)                                                                        \
  X(bytes_received)                                                                     \
  X(bytes_sent)                                                                         \
  X(frames_oversize)                                                                    \
  X(frames_malformed)          /* bad header, or plaintext not the documented layout */ \
  X(frames_unknown_sender)     /* sender key id not a roster member (or ourselves) */  \
  X(frames_no_roster)          /* nothing can be opened before a roster is held */      \
  X(frames_undecryptable)      /* AEAD check failed: tampered, or sealed for another node */ \
  X(frames_replayed)           /* nonce already seen, or older than the replay window */ \
  X(messages_unknown_type)     /* skipped: a newer peer's message type */               \
  /* dissemination */                                                                   \
  X(bodies_pushed_received)    /* PUSH bodies received */                               \
  X(bodies_repair_received)    /* REPAIR bodies received */                             \
  X(bodies_useful)             /* bodies that stored a new record */                    \
  X(bodies_sent)                                                                        \
  X(ihave_entries_sent)                                                                 \
  X(ihave_entries_received)                                                             \
  X(ihave_entries_spared)      /* not sent: the peer had announced that record to us */ \
  X(grafts_sent)                                                                        \
  X(grafts_received)                                                                    \
  X(prunes_sent)                                                                        \
  X(prunes_received)                                                                    \
  X(summaries_sent)            /* SYNC rounds opened (a SUMMARY to a SYNC partner) */   \
  X(summaries_received)                                                                 \
  X(summaries_matched)         /* our records up to the cutoff were the same: no SYNC */ \
  X(summaries_throttled)       /* a peer's SUMMARY within sync_interval_ms / 2 of its last: ignored */ \
  X(syncs_sent)                /* SYNC lists: a round opened in full, or a SUMMARY's answer */ \
  X(syncs_received)                                                                     \
  X(roster_offers_sent)        /* our roster sent to a peer on an older version */      \
  X(outbox_dropped)            /* a body not queued: the peer's queue was full */       \
  X(announce_dropped)          /* an IHAVE entry dropped: announce queue full */        \
  X(missing_dropped)           /* an IHAVE not tracked: missing table full */           \
  /* overlay repair */                                                                  \
  X(links_failed)              /* paths the transport reported failed (timeouts): dead at the next tick */ \
  X(links_up)                  /* paths the transport reported working (a connection made or adopted) */ \
  X(path_hints)                /* dead links tried at once because a probe reached the peer's host */ \
  X(links_dead)                /* overlay neighbours found silent past link_dead_after_ms, or failed */ \
  X(links_revived)             /* dead neighbours heard from again */                   \
  X(stand_ins)                 /* peers taken in to stand in for a dead neighbour */    \
  X(keepalives_sent)           /* empty frames on links silent for keepalive_interval_ms */ \
  X(catch_ups)                 /* links back from a restart or a dead spell, sent the recent records' IHAVEs */

struct Counters {
#define MESH_GOSSIP_COUNTER_FIELD(name) std::uint64_t name = 0;
  MESH_GOSSIP_COUNTERS(MESH_GOSSIP_COUNTER_FIELD)
#undef MESH_GOSSIP_COUNTER_FIELD

  // Calls fn(const char* name, std::uint64_t value) for every counter, in
  // declaration order (for logs, meshctl and meshsim's JSON).
  template <class Fn>
  void for_each(Fn&& fn) const {
#define MESH_GOSSIP_COUNTER_VISIT(name) fn(#name, name);
    MESH_GOSSIP_COUNTERS(MESH_GOSSIP_COUNTER_VISIT)
#undef MESH_GOSSIP_COUNTER_VISIT
  }
};

}  // namespace mesh::gossip
