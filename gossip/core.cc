// GossipCore: construction, the public API, record storage and dissemination.
#include "gossip/core.h"

#include <algorithm>

#include "gossip/core_impl.h"

namespace mesh::gossip {

void Effects::merge(Effects&& other) {
  std::move(other.send.begin(), other.send.end(), std::back_inserter(send));
  std::move(other.persist.begin(), other.persist.end(), std::back_inserter(persist));
  std::move(other.erase.begin(), other.erase.end(), std::back_inserter(erase));
  std::move(other.reports_changed.begin(), other.reports_changed.end(),
            std::back_inserter(reports_changed));
  roster_changed = roster_changed || other.roster_changed;
  if (other.sender) sender = other.sender;
  paths_healing = paths_healing || other.paths_healing;
}

GossipCore::Impl::Impl(CoreConfig config, std::uint64_t seed, SharedWork shared)
    : config_(std::move(config)),
      rng_(seed),
      store_(config_.operator_key,
             shared.verifier != nullptr ? *shared.verifier : sodium_verifier_,
             shared.rosters != nullptr ? *shared.rosters : plain_rosters_,
             shared.records != nullptr ? *shared.records : plain_records_, counters_,
             config_.hold_decoded_reports),
      link_(config_.node_key, config_.boot_counter) {
  MESH_CHECK(is_valid_server_id(config_.self), "CoreConfig::self is not a valid server id");
  MESH_CHECK(config_.tick_interval_ms > 0 && config_.sync_interval_ms > 0,
             "CoreConfig intervals must be positive");
  MESH_CHECK(config_.overlay_rings >= 1 && config_.overlay_rings <= PeerSets::kLinksMax / 2,
             "CoreConfig::overlay_rings must be in [1, 32]");
}

Result<GossipCore::Impl::Stored, RecordError> GossipCore::Impl::store_record(
    ByteView raw, UnixMs now, Effects& effects, AcceptNote* note) {
  auto accepted = store_.accept(raw, now, note);
  if (!accepted.ok()) return accepted.error();
  const Acceptance& acceptance = accepted.value();
  if (acceptance.roster_changed) {
    effects.roster_changed = true;
    effects.erase.insert(effects.erase.end(), acceptance.erased.begin(), acceptance.erased.end());
    on_roster_changed();
  }
  auto record = store_.shared(acceptance.kind, acceptance.origin_index);
  MESH_CHECK(record != nullptr, "accepted record not held");
  if (acceptance.kind == RecordKind::report) effects.reports_changed.push_back(acceptance.origin_index);
  const Entry entry{acceptance.kind, acceptance.origin_index, record->envelope.seq, 0};
  return Stored{std::move(record), entry};
}

void GossipCore::Impl::on_roster_changed() {
  const Roster& roster = *store_.roster();
  self_index_ = roster.index_of(config_.self);
  peers_.reset(roster, self_index_, config_.overlay_rings);
  peers_.choose_sync_partners(config_.sync_extra_partners, rng_);
  watch_.reset(peers_.neighbours(), peers_.peers(), static_cast<std::uint32_t>(roster.servers.size()), rng_);
  pushed_by_.assign(peers_.slot_count(), std::nullopt);
  summary_answered_ms_.assign(roster.servers.size(), -1);
  caught_up_ms_.assign(roster.servers.size(), -1);
  // Indices moved: queued work named old indices. SYNC repairs whatever it held.
  outbox_.clear();
  missing_.clear();
  announce_.clear();
  held_by_peer_.clear();
  std::vector<PublicKey> keys;
  for (std::uint32_t i = 0; i < roster.servers.size(); ++i) {
    keys.push_back(roster.servers[i].key);
  }
  std::sort(keys.begin(), keys.end());
  link_.retain_only(keys);
  for (auto it = roster_offered_ms_.begin(); it != roster_offered_ms_.end();) {
    it = std::binary_search(keys.begin(), keys.end(), it->first) ? std::next(it)
                                                                 : roster_offered_ms_.erase(it);
  }
}

PersistRecord GossipCore::Impl::persist_record(const Stored& stored) {
  return PersistRecord{stored.entry.kind, stored.record->envelope.origin, stored.entry.origin,
                       bytes_of(stored.record)};
}

std::vector<Entry> GossipCore::Impl::held_entries() const {
  std::vector<Entry> entries;
  if (const StoredRecord* held = store_.roster_record()) {
    entries.push_back(Entry{RecordKind::roster, 0, held->envelope.seq, held->fingerprint32()});
  }
  const Roster* roster = store_.roster();
  for (std::uint32_t i = 0; roster != nullptr && i < roster->servers.size(); ++i) {
    if (const StoredRecord* report = store_.report(i)) {
      entries.push_back(Entry{RecordKind::report, i, report->envelope.seq, report->fingerprint32()});
    }
  }
  return entries;
}

std::optional<std::uint32_t> GossipCore::Impl::index_of_key(const PublicKey& key) const {
  const IndexedRoster* roster = store_.indexed_roster();
  if (roster == nullptr) return std::nullopt;
  return roster->index_of_key(key);
}

void GossipCore::Impl::queue_body(std::uint32_t peer, RecordKind kind, std::uint32_t origin,
                                  bool repair) {
  auto record = store_.shared(kind, origin);
  MESH_CHECK(record != nullptr, "queue_body of a record not held");
  // The held record's own bytes, shared however many peers it is queued for.
  if (!outbox_.add_body(peer, bytes_of(record), repair, config_.peer_queue_bytes_max)) {
    ++counters_.outbox_dropped;
  }
}

void GossipCore::Impl::spread(const Stored& stored, std::optional<std::uint32_t> from,
                              Spread how) {
  if (how == Spread::none || !self_index_) return;
  const Entry& entry = stored.entry;
  const std::size_t slot = peers_.slot_of(entry.kind, entry.origin);
  if (how == Spread::push) {
    const RecordBytes raw = bytes_of(stored.record);
    peers_.for_each_eager(slot, [&](std::uint32_t peer) {
      if (from && peer == *from) return;
      if (!outbox_.add_body(peer, raw, false, config_.peer_queue_bytes_max)) {
        ++counters_.outbox_dropped;
      }
    });
  }
  // IHAVE: after a push, to the lazy neighbours (Plumtree's lazy push: the
  // repair path of a broken tree edge); after a repair that is not a GRAFT
  // answer, to every neighbour, tree included.
  auto announce = [&](std::uint32_t peer) {
    if (from && peer == *from) return;
    if (announce_.size() >= config_.announce_queue_max) {
      ++counters_.announce_dropped;
      return;
    }
    announce_.emplace_back(peer, entry);
  };
  if (how == Spread::push) {
    peers_.for_each_lazy_neighbour(slot, announce);
  } else {
    peers_.for_each_active(announce);
  }
}

Effects GossipCore::Impl::load(std::span<const Bytes> stored_records, UnixMs now) {
  Effects effects;
  // Rosters first: reports can only be checked against one.
  std::vector<const Bytes*> order;
  for (const Bytes& raw : stored_records) order.push_back(&raw);
  std::stable_partition(order.begin(), order.end(), [](const Bytes* raw) {
    auto envelope = decode_envelope(*raw);
    return envelope.ok() && envelope->kind == RecordKind::roster;
  });
  std::vector<std::pair<RecordKind, ServerId>> refused;
  for (const Bytes* raw : order) {
    auto stored = store_record(*raw, now, effects, nullptr);
    if (stored.ok()) continue;
    if (auto envelope = decode_envelope(*raw); envelope.ok()) {
      refused.emplace_back(envelope->kind, envelope->origin);
    }
  }
  // Erase a refused record's key only if nothing valid is held under it.
  for (auto& [kind, origin] : refused) {
    const auto index = store_.index_of(origin);
    const bool held = kind == RecordKind::roster ? store_.roster_record() != nullptr
                                                 : index && store_.report(*index) != nullptr;
    if (!held) effects.erase.emplace_back(kind, origin);
  }
  return effects;
}

Result<Effects, RecordError> GossipCore::Impl::publish(ByteView raw_record, UnixMs now) {
  Effects effects;
  auto stored = store_record(raw_record, now, effects, nullptr);
  if (!stored.ok()) return stored.error();
  effects.persist.push_back(persist_record(*stored));
  const Entry& entry = stored->entry;
  if (self_index_) pushed_by_[peers_.slot_of(entry.kind, entry.origin)].reset();
  spread(stored.value(), std::nullopt, Spread::push);
  return effects;
}

// --- GossipCore: forwards to Impl ---

GossipCore::GossipCore(CoreConfig config, std::uint64_t seed, SharedWork shared)
    : impl_(std::make_unique<Impl>(std::move(config), seed, shared)) {}
GossipCore::~GossipCore() = default;

Effects GossipCore::load(std::span<const Bytes> stored_records, UnixMs now) {
  return impl_->load(stored_records, now);
}
Result<Effects, RecordError> GossipCore::publish(ByteView raw_record, UnixMs now) {
  return impl_->publish(raw_record, now);
}
Effects GossipCore::on_message(ByteView frame, UnixMs now) { return impl_->on_message(frame, now); }
Effects GossipCore::on_tick(UnixMs now) { return impl_->on_tick(now); }
void GossipCore::on_link_failed(std::string_view peer, UnixMs now) {
  const auto index = index_of(peer);
  if (!index || index == self_index()) return;
  ++impl_->counters_.links_failed;
  impl_->watch_.failed(*index, now);
}

void GossipCore::on_link_up(std::string_view peer, UnixMs now) {
  const auto index = index_of(peer);
  if (!index || index == self_index()) return;
  ++impl_->counters_.links_up;
  impl_->watch_.path_up(*index, now);
  if (impl_->watch_.dead(*index)) impl_->outbox_.touch(*index);
}

bool GossipCore::on_path_hint(std::string_view peer, UnixMs now) {
  (void)now;
  const auto index = index_of(peer);
  if (!index || index == self_index() || !impl_->watch_.dead(*index)) return false;
  ++impl_->counters_.path_hints;
  impl_->outbox_.touch(*index);
  return true;
}
const Roster* GossipCore::roster() const { return impl_->store_.roster(); }
std::shared_ptr<const Roster> GossipCore::shared_roster() const {
  return impl_->store_.shared_roster();
}
std::optional<std::uint32_t> GossipCore::self_index() const { return impl_->self_index_; }
Digest GossipCore::digest() const { return impl_->store_.digest(); }
std::optional<std::uint32_t> GossipCore::index_of(std::string_view id) const {
  return impl_->store_.index_of(id);
}
std::array<std::uint8_t, 16> GossipCore::summary(UnixMs cutoff_ms) const {
  return impl_->store_.summary(cutoff_ms);
}
const Counters& GossipCore::counters() const { return impl_->counters_; }
std::size_t GossipCore::record_count() const { return impl_->store_.size(); }
std::vector<std::uint32_t> GossipCore::eager_peers() const { return impl_->peers_.neighbours(); }
std::vector<std::uint32_t> GossipCore::eager_peers_for(RecordKind kind, std::uint32_t origin) const {
  const PeerSets& peers = impl_->peers_;
  if (peers.slot_count() == 0) return {};
  return peers.eager(peers.slot_of(kind, origin));
}

std::vector<std::uint32_t> GossipCore::sync_partners() const {
  return impl_->peers_.sync_partners();
}

std::vector<std::uint32_t> GossipCore::linked_peers() const {
  std::vector<std::uint32_t> peers;
  for (const PublicKey& key : impl_->link_.linked_keys()) {
    if (auto index = impl_->index_of_key(key)) peers.push_back(*index);
  }
  std::sort(peers.begin(), peers.end());
  return peers;
}

std::optional<std::uint64_t> GossipCore::held_seq(RecordKind kind, std::string_view origin) const {
  const RecordStore& store = impl_->store_;
  if (kind == RecordKind::roster) {
    if (origin != kOperatorOrigin || store.roster_record() == nullptr) return std::nullopt;
    return store.roster_record()->envelope.seq;
  }
  const auto index = store.index_of(origin);
  const StoredRecord* report = index ? store.report(*index) : nullptr;
  if (report == nullptr) return std::nullopt;
  return report->envelope.seq;
}

std::optional<HeldRecord> GossipCore::report_of(std::uint32_t index) const {
  const StoredRecord* report = impl_->store_.report(index);
  if (report == nullptr) return std::nullopt;
  return HeldRecord{&report->envelope, index, report->report.get()};
}

void GossipCore::for_each_record(const std::function<void(const HeldRecord&)>& fn) const {
  const RecordStore& store = impl_->store_;
  if (const StoredRecord* roster = store.roster_record()) fn(HeldRecord{&roster->envelope, 0, nullptr});
  const Roster* roster = store.roster();
  for (std::uint32_t i = 0; roster != nullptr && i < roster->servers.size(); ++i) {
    if (auto held = report_of(i)) fn(*held);
  }
}

}  // namespace mesh::gossip
