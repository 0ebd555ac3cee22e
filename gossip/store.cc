#include "gossip/store.h"

#include <sodium.h>

#include <algorithm>
#include <string>

namespace mesh::gossip {
namespace {

RecordHash hash_of(ByteView raw) {
  RecordHash hash{};
  crypto_generichash(hash.data(), hash.size(), raw.data(), raw.size(), nullptr, 0);
  return hash;
}

StoredRecord make_stored(Envelope envelope, std::optional<Report> report) {
  // The payload is a copy of bytes inside raw, and decoded already: drop it.
  envelope.payload = Bytes{};
  StoredRecord stored{std::move(envelope), {}, std::move(report)};
  stored.hash = hash_of(stored.envelope.raw);
  return stored;
}

}  // namespace

std::uint32_t StoredRecord::hash32() const {
  return (std::uint32_t{hash[0]} << 24) | (std::uint32_t{hash[1]} << 16) |
         (std::uint32_t{hash[2]} << 8) | std::uint32_t{hash[3]};
}

RecordStore::RecordStore(const PublicKey& operator_key, SignatureVerifier& verifier,
                         Counters& counters, bool hold_decoded_reports)
    : operator_key_(operator_key),
      verifier_(verifier),
      hold_decoded_reports_(hold_decoded_reports),
      counters_(counters) {}

Error<RecordError> RecordStore::refuse(RecordError code, std::uint64_t Counters::*counter,
                                       std::string message) {
  ++(counters_.*counter);
  return make_error(code, std::move(message));
}

Result<Acceptance, RecordError> RecordStore::accept(Bytes raw, UnixMs now, AcceptNote* note) {
  AcceptNote ignored;
  AcceptNote& out = note != nullptr ? *note : ignored;
  out = AcceptNote{};
  if (raw.size() > kRecordBytesMax) {
    return refuse(RecordError::oversize, &Counters::records_oversize, "record over kRecordBytesMax");
  }
  auto decoded = decode_envelope(raw);
  if (!decoded.ok()) {
    const RecordError code = decoded.code();
    auto counter = code == RecordError::unknown_kind ? &Counters::records_unknown_kind
                   : code == RecordError::oversize   ? &Counters::records_oversize
                                                     : &Counters::records_malformed;
    return refuse(code, counter, "envelope: " + decoded.message());
  }
  Envelope envelope = std::move(decoded.value());
  switch (envelope.kind) {
    case RecordKind::roster: return accept_roster(std::move(envelope), now, out);
    case RecordKind::report: return accept_report(std::move(envelope), now, out);
  }
  return refuse(RecordError::unknown_kind, &Counters::records_unknown_kind, "unknown record kind");
}

DurationMs RecordStore::max_clock_skew_ms() const {
  return roster_ ? roster_->params.max_clock_skew_ms : Parameters{}.max_clock_skew_ms;
}

Status<RecordError> RecordStore::check_newer(const StoredRecord* held, const Envelope& incoming,
                                             AcceptNote& note) {
  if (held == nullptr) return Ok{};
  const Envelope& current = held->envelope;
  if (incoming.seq > current.seq) return Ok{};
  if (incoming.seq == current.seq && incoming.raw == current.raw) {
    note.duplicate = true;
    return refuse(RecordError::stale, &Counters::records_duplicate, "duplicate of the held record");
  }
  if (incoming.seq == current.seq && incoming.raw < current.raw) return Ok{};  // tie-break
  return refuse(RecordError::stale, &Counters::records_stale,
                "seq " + std::to_string(incoming.seq) + " not newer than held " +
                    std::to_string(current.seq) + " of " + incoming.origin);
}

Result<Acceptance, RecordError> RecordStore::accept_roster(Envelope envelope, UnixMs now,
                                                           AcceptNote& note) {
  if (envelope.origin != kOperatorOrigin) {
    return refuse(RecordError::unknown_origin, &Counters::records_unknown_origin,
                  "roster origin is not \"operator\"");
  }
  note.resolved = true;
  note.kind = RecordKind::roster;
  if (envelope.timestamp_ms > now + max_clock_skew_ms()) {
    return refuse(RecordError::future_timestamp, &Counters::records_future, "roster dated in the future");
  }
  const StoredRecord* held = roster_record();
  if (auto newer = check_newer(held, envelope, note); !newer.ok()) return newer.error();
  const bool tie_break = held != nullptr && held->envelope.seq == envelope.seq;
  if (!verifier_.verify(operator_key_, envelope.signed_part(), envelope.signature)) {
    return refuse(RecordError::bad_signature, &Counters::records_bad_signature,
                  "roster not signed by the operator key");
  }
  auto roster = decode_roster_payload(envelope.payload, envelope.seq);
  if (!roster.ok()) {
    return refuse(RecordError::invalid_payload, &Counters::records_invalid_payload,
                  "roster payload: " + roster.message());
  }
  ++counters_.records_accepted;
  if (tie_break) ++counters_.records_equivocation_won;
  Acceptance acceptance{RecordKind::roster, 0, true, {}};
  acceptance.erased = install_roster(std::move(roster.value()));
  roster_record_ = make_stored(std::move(envelope), std::nullopt);
  digest_cache_.reset();
  return acceptance;
}

std::vector<std::pair<RecordKind, ServerId>> RecordStore::install_roster(Roster roster) {
  std::vector<std::pair<RecordKind, ServerId>> erased;
  std::unordered_map<std::string, std::uint32_t, IdHash, std::equal_to<>> index_by_id;
  index_by_id.reserve(roster.servers.size());
  for (std::uint32_t i = 0; i < roster.servers.size(); ++i) index_by_id.emplace(roster.servers[i].id, i);
  std::vector<std::optional<StoredRecord>> moved(roster.servers.size());
  for (std::size_t old_index = 0; old_index < reports_.size(); ++old_index) {
    auto& slot = reports_[old_index];
    if (!slot) continue;
    const std::string& origin = slot->envelope.origin;
    const auto found = index_by_id.find(origin);
    // A report stays only if its origin is still a member with the same key
    // (the key that signed it).
    if (found != index_by_id.end() &&
        roster.servers[found->second].key == roster_->servers[old_index].key) {
      moved[found->second] = std::move(slot);
    } else {
      erased.emplace_back(RecordKind::report, origin);
      ++counters_.records_erased;
    }
  }
  reports_ = std::move(moved);
  index_by_id_ = std::move(index_by_id);
  roster_ = std::make_shared<const Roster>(std::move(roster));
  return erased;
}

Result<Acceptance, RecordError> RecordStore::accept_report(Envelope envelope, UnixMs now,
                                                           AcceptNote& note) {
  if (!roster_) {
    return refuse(RecordError::unknown_origin, &Counters::records_no_roster,
                  "report before any roster is held");
  }
  const auto index = index_of(envelope.origin);
  if (!index) {
    return refuse(RecordError::unknown_origin, &Counters::records_unknown_origin,
                  "report origin " + envelope.origin + " is not in roster " +
                      std::to_string(roster_->version));
  }
  note.resolved = true;
  note.kind = RecordKind::report;
  note.origin_index = *index;
  if (envelope.timestamp_ms > now + max_clock_skew_ms()) {
    return refuse(RecordError::future_timestamp, &Counters::records_future,
                  "report of " + envelope.origin + " dated in the future");
  }
  const StoredRecord* held = report(*index);
  if (auto newer = check_newer(held, envelope, note); !newer.ok()) return newer.error();
  const bool tie_break = held != nullptr && held->envelope.seq == envelope.seq;
  if (!verifier_.verify(roster_->servers[*index].key, envelope.signed_part(), envelope.signature)) {
    return refuse(RecordError::bad_signature, &Counters::records_bad_signature,
                  "report of " + envelope.origin + " not signed by its roster key");
  }
  auto report_payload =
      decode_report_payload(envelope.payload, *roster_, *index, envelope.timestamp_ms);
  if (!report_payload.ok()) {
    return refuse(RecordError::invalid_payload, &Counters::records_invalid_payload,
                  "report payload of " + envelope.origin + ": " + report_payload.message());
  }
  ++counters_.records_accepted;
  if (tie_break) ++counters_.records_equivocation_won;
  std::optional<Report> decoded;
  if (hold_decoded_reports_) decoded = std::move(report_payload.value());
  reports_[*index] = make_stored(std::move(envelope), std::move(decoded));
  digest_cache_.reset();
  return Acceptance{RecordKind::report, *index, false, {}};
}

const StoredRecord* RecordStore::report(std::uint32_t index) const {
  if (index >= reports_.size() || !reports_[index]) return nullptr;
  return &*reports_[index];
}

const StoredRecord* RecordStore::find(RecordKind kind, std::uint32_t origin_index) const {
  return kind == RecordKind::roster ? roster_record() : report(origin_index);
}

std::optional<std::uint32_t> RecordStore::index_of(std::string_view id) const {
  auto it = index_by_id_.find(id);
  if (it == index_by_id_.end()) return std::nullopt;
  return it->second;
}

std::size_t RecordStore::size() const {
  std::size_t count = roster_record_ ? 1 : 0;
  for (const auto& slot : reports_) count += slot ? 1 : 0;
  return count;
}

std::array<std::uint8_t, 32> RecordStore::digest() const {
  if (digest_cache_) return *digest_cache_;
  std::vector<const StoredRecord*> held;
  for (const auto& slot : reports_) {
    if (slot) held.push_back(&*slot);
  }
  // Origin ids, not roster indices: equal sets hash equally across rosters.
  std::sort(held.begin(), held.end(), [](const StoredRecord* a, const StoredRecord* b) {
    return a->envelope.origin < b->envelope.origin;
  });
  if (roster_record_) held.insert(held.begin(), &*roster_record_);
  crypto_generichash_state state;
  crypto_generichash_init(&state, nullptr, 0, 32);
  for (const StoredRecord* record : held) {
    std::uint8_t head[2] = {static_cast<std::uint8_t>(record->envelope.kind),
                            static_cast<std::uint8_t>(record->envelope.origin.size())};
    std::uint8_t seq[8];
    for (int i = 0; i < 8; ++i) seq[i] = static_cast<std::uint8_t>(record->envelope.seq >> (56 - 8 * i));
    crypto_generichash_update(&state, head, sizeof head);
    crypto_generichash_update(&state, reinterpret_cast<const std::uint8_t*>(record->envelope.origin.data()),
                              record->envelope.origin.size());
    crypto_generichash_update(&state, seq, sizeof seq);
    crypto_generichash_update(&state, record->hash.data(), record->hash.size());
  }
  std::array<std::uint8_t, 32> digest{};
  crypto_generichash_final(&state, digest.data(), digest.size());
  digest_cache_ = digest;
  return digest;
}

}  // namespace mesh::gossip
