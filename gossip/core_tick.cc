// GossipCore: timers and frames out. Everything queued since the last tick
// leaves here, at most one sealed frame per peer.
#include <algorithm>
#include <tuple>

#include "gossip/core_impl.h"

namespace mesh::gossip {

Effects GossipCore::Impl::on_tick(UnixMs now) {
  Effects effects;
  if (store_.roster() == nullptr || !self_index_) return effects;  // nobody to talk to
  tick_grafts(now);
  tick_links(now);
  tick_sync(now);
  tick_announce(now);
  flush(effects, now);
  return effects;
}

void GossipCore::Impl::tick_links(UnixMs now) {
  const LinkWatch::Changes changes = watch_.tick(now, config_.link_dead_after_ms);
  for (std::uint32_t dead : changes.died) {
    peers_.set_all_trees(dead, false);
    peers_.set_active(dead, false);
    ++counters_.links_dead;
  }
  for (std::uint32_t retired : changes.retired) {
    peers_.set_all_trees(retired, false);
    peers_.set_active(retired, false);
  }
  for (const auto& [dead, stand_in] : changes.stand_ins) {
    if (!peers_.set_active(stand_in, true) || !peers_.set_all_trees(stand_in, true)) continue;
    ++counters_.stand_ins;
    // GRAFT every tree from it: it takes us into its trees and sends what it
    // holds newer than we do (HyParView's join, over Plumtree's GRAFT).
    const Roster& roster = *store_.roster();
    for (std::uint32_t origin = 0; origin < roster.servers.size(); ++origin) {
      if (self_index_ && origin == *self_index_) continue;
      const StoredRecord* held = store_.find(RecordKind::report, origin);
      outbox_.add_graft(stand_in, Entry{RecordKind::report, origin, held ? held->envelope.seq + 1 : 0, 0});
    }
    const StoredRecord* roster_held = store_.find(RecordKind::roster, 0);
    outbox_.add_graft(stand_in, Entry{RecordKind::roster, 0, roster_held ? roster_held->envelope.seq + 1 : 0, 0});
    counters_.grafts_sent += roster.servers.size();
  }
  for (std::uint32_t peer : watch_.keepalives_due(now, config_.keepalive_interval_ms,
                                                  config_.link_dead_after_ms)) {
    outbox_.touch(peer);
  }
}

bool GossipCore::Impl::heard_from(std::uint32_t from, bool keepalive, bool restarted,
                                  UnixMs now) {
  const UnixMs last_heard = watch_.last_heard_ms(from);
  const LinkWatch::Heard heard = watch_.heard(from, now, config_.link_dead_after_ms, restarted);
  if (heard.retired) {
    peers_.set_all_trees(*heard.retired, false);
    peers_.set_active(*heard.retired, false);
  }
  if (heard.revived) {
    peers_.set_active(from, true);  // lazy in every tree: IHAVE and GRAFT rebuild its edges
    ++counters_.links_revived;
  }
  // Half the interval: a peer that does not keep the link active itself
  // (a stand-in that did not take us in) hears from us only in answers. Had
  // it sent us something just before our keepalive came, a full interval
  // would leave the next answer a whole interval later, close to 2·interval
  // of silence, which at 15 s reaches the 30 s dead window.
  if (keepalive && watch_.answer_due(from, now, config_.keepalive_interval_ms / 2)) {
    outbox_.touch(from);
  }
  if ((restarted || heard.revived) && peers_.is_active(from)) catch_up(from, last_heard, now);
  return heard.revived;
}

void GossipCore::Impl::catch_up(std::uint32_t peer, UnixMs last_heard, UnixMs now) {
  // What travelled while the link was down went past the peer: its tree
  // pushes and our IHAVEs were lost. SYNC repairs only settled records, and
  // a restarted core's first round is up to sync_interval_ms away, so a
  // record published just before the peer stopped would wait for it. The
  // window opens sync_settle_ms before we last heard from the peer (those
  // records may still have been on their way), however long ago: after a
  // partition heals, everything published on our side during it reaches
  // the other side in one IHAVE and GRAFT exchange per revived link rather
  // than one SYNC round per node. We hold one record per origin, so that is
  // at most one entry per member, once per dead spell; the peer ignores
  // those it holds (docs/PROTOCOL.md §4a).
  UnixMs& caught_up = caught_up_ms_[peer];
  if (caught_up >= 0 && now - caught_up < config_.sync_interval_ms / 2) return;
  caught_up = now;
  ++counters_.catch_ups;
  const UnixMs since = last_heard - config_.sync_settle_ms;
  auto announce = [&](const StoredRecord* held, RecordKind kind, std::uint32_t origin) {
    if (held == nullptr || held->envelope.timestamp_ms < since) return;
    if (announce_.size() >= config_.announce_queue_max) {
      ++counters_.announce_dropped;
      return;
    }
    announce_.emplace_back(peer, Entry{kind, origin, held->envelope.seq, held->fingerprint32()});
  };
  announce(store_.roster_record(), RecordKind::roster, 0);
  const Roster* roster = store_.roster();
  for (std::uint32_t i = 0; roster != nullptr && i < roster->servers.size(); ++i) {
    if (i == peer) continue;  // its own records it has
    announce(store_.report(i), RecordKind::report, i);
  }
}

void GossipCore::Impl::tick_grafts(UnixMs now) {
  for (const auto& [peer, entry] : missing_.due(now, config_.ihave_timeout_ms)) {
    if (!peers_.is_peer(peer)) continue;
    // GRAFT: the edge joins this origin's tree on both sides.
    peers_.make_eager(peers_.slot_of(entry.kind, entry.origin), peer);
    outbox_.add_graft(peer, entry);
    ++counters_.grafts_sent;
  }
}

void GossipCore::Impl::tick_sync(UnixMs now) {
  if (!next_sync_ms_) {
    // The first round at a random point of the interval, so that nodes
    // started together do not sync in lockstep.
    next_sync_ms_ = now + static_cast<DurationMs>(
                              rng_.below(static_cast<std::uint64_t>(config_.sync_interval_ms)));
  }
  if (now < *next_sync_ms_) return;
  next_sync_ms_ = now + config_.sync_interval_ms;
  const auto peer = peers_.random_sync_partner(rng_);
  if (!peer) return;
  const bool full = !sync_full_until_ || now < *sync_full_until_;
  if (!sync_full_until_) sync_full_until_ = now;
  if (full) {
    outbox_.set_sync(*peer, held_entries());
    ++counters_.syncs_sent;
    return;
  }
  // Records younger than the settle time may still be on their way: leave
  // them out, so that a fleet in agreement matches. The cutoff is rounded
  // down to a multiple of the round interval: every summary opened in one
  // interval, by this node or its peers, then has the same cutoff, and the
  // store hashes the set once for all of them (docs/PROTOCOL.md §5).
  Summary summary;
  const UnixMs settled = std::max<UnixMs>(0, now - config_.sync_settle_ms);
  const UnixMs cutoff = settled - settled % std::max<DurationMs>(config_.sync_interval_ms, 1);
  summary.cutoff_ms = static_cast<std::uint64_t>(cutoff);
  summary.digest = store_.summary(cutoff);
  outbox_.set_summary(*peer, summary);
  ++counters_.summaries_sent;
}

void GossipCore::Impl::tick_announce(UnixMs now) {
  if (announce_.empty()) {
    held_by_peer_.clear();  // nothing was queued that they could spare
    return;
  }
  if (now < next_announce_ms_) return;
  next_announce_ms_ = now + config_.announce_interval_ms;
  // A peer that announced a record to us holds it: our IHAVE would tell it
  // nothing. Sorted by (peer, kind, origin), highest seq first.
  const auto key = [](const std::pair<std::uint32_t, Entry>& item) {
    return std::make_tuple(item.first, item.second.kind, item.second.origin);
  };
  std::sort(held_by_peer_.begin(), held_by_peer_.end(), [&](const auto& a, const auto& b) {
    return key(a) != key(b) ? key(a) < key(b) : a.second.seq > b.second.seq;
  });
  for (const auto& item : announce_) {
    const auto held = std::lower_bound(held_by_peer_.begin(), held_by_peer_.end(), item,
                                       [&](const auto& a, const auto& b) { return key(a) < key(b); });
    if (held != held_by_peer_.end() && key(*held) == key(item) &&
        held->second.seq >= item.second.seq) {
      ++counters_.ihave_entries_spared;
      continue;
    }
    counters_.announce_dropped += outbox_.add_ihave(item.first, item.second);
  }
  announce_.clear();
  held_by_peer_.clear();
}

void GossipCore::Impl::flush(Effects& effects, UnixMs now) {
  const Roster& roster = *store_.roster();
  outbox_.drain(config_.frame_budget_bytes, roster.version,
                [&](std::uint32_t peer, const FrameContent& content) {
    // The plaintext is written after the header room and sealed in place.
    Bytes frame(kFrameHeaderBytesMax);
    std::size_t estimate = kFrameHeaderBytesMax + kFrameTagBytes + 32 +
                           (content.ihave.size() + content.graft.size() + content.prune.size()) *
                               kEntryBytesMax +
                           (content.summary ? kSummaryMessageBytes : 0) +
                           ((content.sync ? content.sync->size() : 0) +
                            (content.sync_reply ? content.sync_reply->size() : 0)) *
                               kSyncEntryBytesMax;
    for (const Body& body : content.bodies) estimate += body_bytes_max(body.raw.size());
    frame.reserve(estimate);
    encode_frame_content(content, frame);
    if (!link_.seal_in_place(roster.servers[peer].key, frame).ok()) {
      return;  // a roster key with no X25519 form: nothing can reach it
    }
    counters_.bodies_sent += content.bodies.size();
    counters_.ihave_entries_sent += content.ihave.size();
    ++counters_.frames_sent;
    watch_.sent(peer, now);
    if (content.empty()) ++counters_.keepalives_sent;
    counters_.bytes_sent += frame.size();
    effects.send.push_back(Outgoing{peer, std::move(frame)});
  });
}

}  // namespace mesh::gossip
