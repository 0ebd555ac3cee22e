// GossipCore: frames in. A frame is checked (size, header, sender, AEAD,
// replay, layout) before any of it is applied; a bad frame changes nothing.
#include <algorithm>

#include "gossip/core_impl.h"

namespace mesh::gossip {

Effects GossipCore::Impl::on_message(ByteView frame, UnixMs now) {
  Effects effects;
  ++counters_.frames_received;
  counters_.bytes_received += frame.size();
  if (frame.size() > kFrameBytesMax) {
    ++counters_.frames_oversize;
    return effects;
  }
  auto header = parse_frame_header(frame);
  if (!header.ok()) {
    ++counters_.frames_malformed;
    return effects;
  }
  const Roster* roster = store_.roster();
  if (roster == nullptr) {
    ++counters_.frames_no_roster;
    return effects;
  }
  const auto candidates = store_.indexed_roster()->with_key_id(header->sender);
  if (candidates.empty()) {
    ++counters_.frames_unknown_sender;
    return effects;
  }
  // Key ids are 4 bytes of the key: two members could share one, and the
  // AEAD then tells which of them sealed the frame.
  LinkError last = LinkError::bad_key;
  for (const auto& [key_id, index] : candidates) {
    if (self_index_ && index == *self_index_) continue;
    const PublicKey sender = roster->servers[index].key;
    bool restarted = false;
    auto opened = link_.open_into(sender, header.value(), frame, plaintext_, &restarted);
    if (!opened.ok()) {
      last = opened.code();
      continue;
    }
    auto content = decode_frame_content(plaintext_);
    if (!content.ok()) {
      ++counters_.frames_malformed;
    } else {
      apply(sender, std::move(content.value()), restarted, now, effects);
    }
    // A frame past the batching budget carried a roster (about 600 KB at
    // 3000 servers): its buffer is not kept for the next frame. Kept,
    // every node held one roster's size for good: 1.8 GB of meshsim's
    // 5 GB at 3000 servers.
    if (plaintext_.capacity() > config_.frame_budget_bytes + kFrameOverheadBytesMax) Bytes().swap(plaintext_);
    return effects;
  }
  if (last == LinkError::replayed) {
    ++counters_.frames_replayed;
  } else if (last == LinkError::bad_key) {
    ++counters_.frames_unknown_sender;
  } else {
    ++counters_.frames_undecryptable;
  }
  return effects;
}

void GossipCore::Impl::apply(const PublicKey& sender, FrameContent content, bool restarted,
                             UnixMs now, Effects& effects) {
  counters_.messages_unknown_type += content.unknown_messages;
  auto from = index_of_key(sender);
  MESH_CHECK(from.has_value(), "an opened frame's sender is a member");
  effects.sender = from;
  if (content.roster_version == store_.roster()->version) {
    effects.paths_healing = heard_from(*from, content.empty(), restarted, now);
  }
  apply_versions(*from, content.roster_version, now);
  const bool same_version = content.roster_version == store_.roster()->version;
  apply_prunes(*from, content.prune, same_version);
  apply_grafts(*from, content.graft, same_version);
  for (const Body& body : content.bodies) {
    apply_body(sender, from, body, now, effects);
  }
  if (!from || content.roster_version != store_.roster()->version) {
    // Entry origins are indices in the sender's roster: only roster entries
    // mean the same to us, and the roster exchange is handled by apply_versions.
    return;
  }
  apply_ihave(*from, content.ihave, true, now);
  if (content.summary) apply_summary(*from, *content.summary, now);
  if (content.sync) apply_sync(*from, *content.sync, now);
  if (content.sync_reply) apply_sync_reply(*from, *content.sync_reply, now);
}

void GossipCore::Impl::apply_versions(std::uint32_t from, std::uint64_t their_version, UnixMs now) {
  const std::uint64_t mine = store_.roster()->version;
  if (their_version > mine) {
    // Ask the sender for its roster, at most once per offer interval.
    if (roster_requested_ms_ < 0 || now - roster_requested_ms_ >= config_.roster_offer_interval_ms) {
      roster_requested_ms_ = now;
      outbox_.add_graft(from, Entry{RecordKind::roster, 0, their_version, 0});
      ++counters_.grafts_sent;
    }
  } else if (their_version < mine) {
    const PublicKey& key = store_.roster()->servers[from].key;
    auto it = roster_offered_ms_.find(key);
    if (it == roster_offered_ms_.end() || now - it->second >= config_.roster_offer_interval_ms) {
      roster_offered_ms_[key] = now;
      queue_body(from, RecordKind::roster, 0, true);
      ++counters_.roster_offers_sent;
    }
  }
}

void GossipCore::Impl::apply_prunes(std::uint32_t from, const std::vector<Entry>& prunes,
                                    bool same_version) {
  for (const Entry& entry : prunes) {
    ++counters_.prunes_received;
    if (entry.kind == RecordKind::report && (!same_version || entry.origin >= peers_.slot_count() - 1)) {
      continue;
    }
    peers_.make_lazy(peers_.slot_of(entry.kind, entry.origin), from);
  }
}

void GossipCore::Impl::apply_grafts(std::uint32_t from, const std::vector<Entry>& grafts,
                                    bool same_version) {
  for (const Entry& entry : grafts) {
    ++counters_.grafts_received;
    if (entry.kind == RecordKind::report && !same_version) continue;
    const StoredRecord* held = store_.find(entry.kind, entry.origin);
    if (held == nullptr) continue;
    // The edge joins this origin's tree on our side too.
    peers_.make_eager(peers_.slot_of(entry.kind, entry.origin), from);
    if (held->envelope.seq >= entry.seq) queue_body(from, entry.kind, entry.origin, true);
  }
}

void GossipCore::Impl::apply_body(const PublicKey& sender, std::optional<std::uint32_t>& from,
                                  const Body& body, UnixMs now, Effects& effects) {
  ++(body.repair ? counters_.bodies_repair_received : counters_.bodies_pushed_received);
  AcceptNote note;
  auto stored = store_record(body.raw, now, effects, &note);
  // A roster in this body may have moved the sender's index, or removed it.
  if (stored.ok() && stored->entry.kind == RecordKind::roster) from = index_of_key(sender);
  if (!stored.ok()) {
    // A pushed copy we did not need, while ours came down the tree from
    // another peer: this origin's tree has a redundant edge here.
    if (stored.code() != RecordError::stale || !note.resolved || body.repair || !from) return;
    const std::size_t slot = peers_.slot_of(note.kind, note.origin_index);
    if (pushed_by_[slot] && *pushed_by_[slot] != *from) {
      peers_.make_lazy(slot, *from);
      outbox_.add_prune(*from, Entry{note.kind, note.origin_index, 0, 0});
      ++counters_.prunes_sent;
    }
    return;
  }
  ++counters_.bodies_useful;
  effects.persist.push_back(persist_record(*stored));
  const Entry& entry = stored->entry;
  holders_.clear();
  const bool grafted = missing_.resolved(entry.kind, entry.origin, entry.seq, &holders_);
  for (std::uint32_t holder : holders_) note_held(holder, entry);
  if (body.repair && !grafted) note_repair(now);  // neither its tree nor IHAVE brought it
  const std::size_t slot = peers_.slot_of(entry.kind, entry.origin);
  pushed_by_[slot] = body.repair ? std::nullopt : from;
  if (!body.repair && from && !peers_.is_eager(slot, *from)) {
    peers_.make_eager(slot, *from);  // it pushes to us: keep the tree edge symmetric
  }
  spread(stored.value(), from, (!body.repair || grafted) ? Spread::push : Spread::announce);
}

void GossipCore::Impl::apply_ihave(std::uint32_t from, const std::vector<Entry>& entries,
                                   bool same_version, UnixMs now) {
  counters_.ihave_entries_received += entries.size();
  for (const Entry& entry : entries) {
    if (entry.kind == RecordKind::report && !same_version) continue;
    if (entry.kind == RecordKind::report && !peers_.is_peer(entry.origin) &&
        !(self_index_ && entry.origin == *self_index_)) {
      continue;  // not a member index
    }
    const StoredRecord* held = store_.find(entry.kind, entry.origin);
    if (held != nullptr && held->envelope.seq >= entry.seq) {
      if (!announce_.empty()) note_held(from, entry);  // our IHAVE may be queued for it
      continue;
    }
    if (!missing_.announced(entry, from, now, config_.ihave_timeout_ms, config_.missing_max,
                            config_.announcers_per_missing_max)) {
      ++counters_.missing_dropped;
    }
  }
}

bool GossipCore::Impl::settled(const StoredRecord& held, UnixMs now) const {
  return now - held.envelope.timestamp_ms >= config_.sync_settle_ms;
}

void GossipCore::Impl::apply_summary(std::uint32_t from, const Summary& summary, UnixMs now) {
  ++counters_.summaries_received;
  // Summing the record set costs O(N): one answer per peer per half round,
  // whatever a peer sends (an honest one opens a round every sync_interval_ms).
  UnixMs& answered = summary_answered_ms_[from];
  if (answered >= 0 && now - answered < config_.sync_interval_ms / 2) {
    ++counters_.summaries_throttled;
    return;
  }
  answered = now;
  const auto cutoff = static_cast<UnixMs>(std::min<std::uint64_t>(summary.cutoff_ms, INT64_MAX));
  if (store_.summary(cutoff) == summary.digest) {
    ++counters_.summaries_matched;
    return;
  }
  // The sets differ: our entries, and the asker repairs both ways (apply_sync).
  outbox_.set_sync(from, held_entries());
  ++counters_.syncs_sent;
}

void GossipCore::Impl::apply_sync(std::uint32_t from, const std::vector<Entry>& digest,
                                  UnixMs now) {
  ++counters_.syncs_received;
  std::vector<Entry> wanted;           // what the asker holds newer (or different)
  std::vector<std::pair<RecordKind, std::uint32_t>> give;  // what we hold newer (or different)
  std::vector<bool> named;  // report origins the asker listed
  const Roster& roster = *store_.roster();
  named.resize(roster.servers.size(), false);
  bool roster_named = false;
  for (const Entry& entry : digest) {
    if (entry.kind == RecordKind::report && entry.origin >= roster.servers.size()) continue;
    if (entry.kind == RecordKind::report) named[entry.origin] = true; else roster_named = true;
    const StoredRecord* held = store_.find(entry.kind, entry.origin);
    if (held == nullptr || held->envelope.seq < entry.seq) {
      wanted.push_back(entry);
    } else if (held->envelope.seq > entry.seq) {
      give.emplace_back(entry.kind, entry.origin);
    } else if (held->fingerprint32() != entry.hash32) {
      // Equal seq, different records: each side sends its own and the
      // tie-break keeps the smaller on both.
      give.emplace_back(entry.kind, entry.origin);
      wanted.push_back(entry);
    }
  }
  if (store_.roster_record() != nullptr && !roster_named) give.emplace_back(RecordKind::roster, 0);
  for (std::uint32_t i = 0; i < roster.servers.size(); ++i) {
    if (store_.report(i) != nullptr && !named[i]) give.emplace_back(RecordKind::report, i);
  }
  std::size_t bytes = 0;
  for (const auto& [kind, origin] : give) {
    const StoredRecord* held = store_.find(kind, origin);
    if (!settled(*held, now)) continue;  // in flight down its tree
    bytes += held->envelope.raw.size();
    if (bytes > config_.sync_reply_bytes_max) break;  // the rest on the next round
    queue_body(from, kind, origin, true);
    note_repair(now);  // the asker lacked a settled record
  }
  if (!wanted.empty()) outbox_.set_sync_reply(from, std::move(wanted));
}

void GossipCore::Impl::apply_sync_reply(std::uint32_t from, const std::vector<Entry>& wanted,
                                        UnixMs now) {
  std::size_t bytes = 0;
  for (const Entry& entry : wanted) {
    const StoredRecord* held = store_.find(entry.kind, entry.origin);
    // Entries are our own SYNC entries echoed back: send what we hold now.
    if (held == nullptr || held->envelope.seq < entry.seq || !settled(*held, now)) continue;
    bytes += held->envelope.raw.size();
    if (bytes > config_.sync_reply_bytes_max) break;
    queue_body(from, entry.kind, entry.origin, true);
    note_repair(now);
  }
}

}  // namespace mesh::gossip
