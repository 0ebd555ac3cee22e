#include "gossip/store.h"

#include <sodium.h>

#include <algorithm>
#include <cstring>
#include <string>

namespace mesh::gossip {
std::shared_ptr<const StoredRecord> make_stored_record(const EnvelopeView& view,
                                                       std::unique_ptr<Report> report) {
  auto stored = std::make_shared<StoredRecord>();
  Envelope& envelope = stored->envelope;
  envelope.kind = view.kind;
  envelope.origin.assign(view.origin);
  envelope.seq = view.seq;
  envelope.timestamp_ms = view.timestamp_ms;
  envelope.signature = view.signature;
  envelope.raw.assign(view.raw.begin(), view.raw.end());  // the one copy
  stored->report = std::move(report);
  return stored;
}

std::uint32_t StoredRecord::fingerprint32() const { return gossip::fingerprint32(envelope.signature); }

std::uint32_t fingerprint32(const Signature& s) {
  return (std::uint32_t{s[0]} << 24) | (std::uint32_t{s[1]} << 16) | (std::uint32_t{s[2]} << 8) |
         std::uint32_t{s[3]};
}

RecordBytes bytes_of(const std::shared_ptr<const StoredRecord>& record) {
  return RecordBytes(record, &record->envelope.raw);
}

RecordStore::RecordStore(const PublicKey& operator_key, SignatureVerifier& verifier,
                         RosterDecoder& rosters, RecordInterner& records, Counters& counters,
                         bool hold_decoded_reports)
    : operator_key_(operator_key),
      verifier_(verifier),
      rosters_(rosters),
      records_(records),
      hold_decoded_reports_(hold_decoded_reports),
      counters_(counters) {}

Error<RecordError> RecordStore::refuse(RecordError code, std::uint64_t Counters::*counter,
                                       std::string message) {
  ++(counters_.*counter);
  return make_error(code, std::move(message));
}

Result<Acceptance, RecordError> RecordStore::accept(ByteView raw, UnixMs now, AcceptNote* note) {
  AcceptNote ignored;
  AcceptNote& out = note != nullptr ? *note : ignored;
  out = AcceptNote{};
  if (raw.size() > kRecordBytesMax) {
    return refuse(RecordError::oversize, &Counters::records_oversize, "record over kRecordBytesMax");
  }
  auto decoded = decode_envelope_view(raw);
  if (!decoded.ok()) {
    const RecordError code = decoded.code();
    auto counter = code == RecordError::unknown_kind ? &Counters::records_unknown_kind
                   : code == RecordError::oversize   ? &Counters::records_oversize
                                                     : &Counters::records_malformed;
    return refuse(code, counter, "envelope: " + decoded.message());
  }
  const EnvelopeView& envelope = decoded.value();
  switch (envelope.kind) {
    case RecordKind::roster: return accept_roster(envelope, now, out);
    case RecordKind::report: return accept_report(envelope, now, out);
  }
  return refuse(RecordError::unknown_kind, &Counters::records_unknown_kind, "unknown record kind");
}

DurationMs RecordStore::max_clock_skew_ms() const {
  return roster_ ? roster_->roster.params.max_clock_skew_ms : Parameters{}.max_clock_skew_ms;
}

Status<RecordError> RecordStore::check_newer(const StoredRecord* held, const EnvelopeView& incoming,
                                             AcceptNote& note) {
  if (held == nullptr) return Ok{};
  const Envelope& current = held->envelope;
  if (incoming.seq > current.seq) return Ok{};
  if (incoming.seq == current.seq) {
    const ByteView held_raw(current.raw);
    if (std::ranges::equal(incoming.raw, held_raw)) {
      note.duplicate = true;
      return refuse(RecordError::stale, &Counters::records_duplicate, "duplicate of the held record");
    }
    if (std::ranges::lexicographical_compare(incoming.raw, held_raw)) return Ok{};  // tie-break
  }
  return refuse(RecordError::stale, &Counters::records_stale,
                "seq " + std::to_string(incoming.seq) + " not newer than held " +
                    std::to_string(current.seq) + " of " + std::string(incoming.origin));
}

Result<Acceptance, RecordError> RecordStore::accept_roster(const EnvelopeView& envelope, UnixMs now,
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
  auto roster = rosters_.decode(envelope.payload, envelope.seq);
  if (!roster.ok()) {
    return refuse(RecordError::invalid_payload, &Counters::records_invalid_payload,
                  "roster payload: " + roster.message());
  }
  ++counters_.records_accepted;
  if (tie_break) ++counters_.records_equivocation_won;
  Acceptance acceptance{RecordKind::roster, 0, true, {}};
  acceptance.erased = install_roster(std::move(roster.value()));
  // Interned as a report without its decoded form is: meshsim's nodes share
  // one copy (a roster of 3000 servers is about 600 KB; one per node was
  // 1.8 GB of its 5 GB), the daemon's interner makes its own.
  roster_record_ = records_.intern(envelope);
  digest_cache_.reset();
  summary_cache_.reset();  // the indices move
  return acceptance;
}

std::vector<std::pair<RecordKind, ServerId>> RecordStore::install_roster(
    std::shared_ptr<const IndexedRoster> next) {
  std::vector<std::pair<RecordKind, ServerId>> erased;
  const Roster& roster = next->roster;
  std::vector<std::shared_ptr<const StoredRecord>> moved(roster.servers.size());
  for (std::size_t old_index = 0; old_index < reports_.size(); ++old_index) {
    auto& slot = reports_[old_index];
    if (!slot) continue;
    const std::string& origin = slot->envelope.origin;
    const auto found = next->index_of(origin);
    // A report stays only if its origin is still a member with the same key
    // (the key that signed it).
    if (found && roster.servers[*found].key == roster_->roster.servers[old_index].key) {
      moved[*found] = std::move(slot);
    } else {
      erased.emplace_back(RecordKind::report, origin);
      ++counters_.records_erased;
    }
  }
  reports_ = std::move(moved);
  roster_ = std::move(next);
  return erased;
}

Result<Acceptance, RecordError> RecordStore::accept_report(const EnvelopeView& envelope, UnixMs now,
                                                           AcceptNote& note) {
  if (!roster_) {
    return refuse(RecordError::unknown_origin, &Counters::records_no_roster,
                  "report before any roster is held");
  }
  const auto index = index_of(envelope.origin);
  if (!index) {
    return refuse(RecordError::unknown_origin, &Counters::records_unknown_origin,
                  "report origin " + std::string(envelope.origin) + " is not in roster " +
                      std::to_string(roster_->roster.version));
  }
  note.resolved = true;
  note.kind = RecordKind::report;
  note.origin_index = *index;
  if (envelope.timestamp_ms > now + max_clock_skew_ms()) {
    return refuse(RecordError::future_timestamp, &Counters::records_future,
                  "report of " + std::string(envelope.origin) + " dated in the future");
  }
  const StoredRecord* held = report(*index);
  if (auto newer = check_newer(held, envelope, note); !newer.ok()) return newer.error();
  const bool tie_break = held != nullptr && held->envelope.seq == envelope.seq;
  if (!verifier_.verify(roster_->roster.servers[*index].key, envelope.signed_part(), envelope.signature)) {
    return refuse(RecordError::bad_signature, &Counters::records_bad_signature,
                  "report of " + std::string(envelope.origin) + " not signed by its roster key");
  }
  std::unique_ptr<Report> decoded;
  if (hold_decoded_reports_) {
    auto payload =
        decode_report_payload(envelope.payload, roster_->roster, *index, envelope.timestamp_ms);
    if (!payload.ok()) {
      return refuse(RecordError::invalid_payload, &Counters::records_invalid_payload,
                    "report payload of " + std::string(envelope.origin) + ": " + payload.message());
    }
    decoded = std::make_unique<Report>(std::move(payload.value()));
  } else {
    auto valid =
        validate_report_payload(envelope.payload, roster_->roster, *index, envelope.timestamp_ms);
    if (!valid.ok()) {
      return refuse(RecordError::invalid_payload, &Counters::records_invalid_payload,
                    "report payload of " + std::string(envelope.origin) + ": " + valid.message());
    }
  }
  ++counters_.records_accepted;
  if (tie_break) ++counters_.records_equivocation_won;
  // The summary changes only if the record it replaces, or the new one, is
  // at or before its cutoff (a new record is younger than it, mostly).
  const UnixMs touched_ms =
      held ? std::min(held->envelope.timestamp_ms, envelope.timestamp_ms) : envelope.timestamp_ms;
  if (summary_cache_ && touched_ms <= summary_cache_->cutoff_ms) summary_cache_.reset();
  reports_[*index] = decoded ? make_stored_record(envelope, std::move(decoded))
                             : records_.intern(envelope);
  digest_cache_.reset();
  return Acceptance{RecordKind::report, *index, false, {}};
}

const StoredRecord* RecordStore::report(std::uint32_t index) const {
  if (index >= reports_.size()) return nullptr;
  return reports_[index].get();
}

const StoredRecord* RecordStore::find(RecordKind kind, std::uint32_t origin_index) const {
  return kind == RecordKind::roster ? roster_record() : report(origin_index);
}

std::shared_ptr<const StoredRecord> RecordStore::shared(RecordKind kind,
                                                        std::uint32_t origin_index) const {
  if (kind == RecordKind::roster) return roster_record_;
  if (origin_index >= reports_.size()) return nullptr;
  return reports_[origin_index];
}

std::optional<std::uint32_t> RecordStore::index_of(std::string_view id) const {
  if (!roster_) return std::nullopt;
  return roster_->index_of(id);
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
    if (slot) held.push_back(slot.get());
  }
  // Origin ids, not roster indices: equal sets hash equally across rosters.
  std::sort(held.begin(), held.end(), [](const StoredRecord* a, const StoredRecord* b) {
    return a->envelope.origin < b->envelope.origin;
  });
  if (roster_record_) held.insert(held.begin(), roster_record_.get());
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
    // The signature stands for the record: it is deterministic per (key,
    // signed bytes), libsodium refuses non-canonical (malleated) ones, and a
    // second message under the same signature would take a SHA-512
    // collision. So equal signatures mean equal verified records.
    crypto_generichash_update(&state, record->envelope.signature.data(),
                              record->envelope.signature.size());
  }
  std::array<std::uint8_t, 32> digest{};
  crypto_generichash_final(&state, digest.data(), digest.size());
  digest_cache_ = digest;
  return digest;
}

std::array<std::uint8_t, 16> RecordStore::summary(UnixMs cutoff_ms) const {
  if (summary_cache_ && summary_cache_->cutoff_ms == cutoff_ms) return summary_cache_->value;
  // A sum over the set, not a hash of a list (docs/PROTOCOL.md §5): each
  // held record adds its signature, as eight 64-bit lanes, so a summary
  // costs one pass over the records and a 68-byte hash (at N = 1000 it
  // hashed 29 KB, a tenth of meshsim's CPU).
  std::uint32_t count = 0;
  std::array<std::uint64_t, kSignatureBytes / 8> lanes{};
  auto add = [&](const StoredRecord& record) {
    if (record.envelope.timestamp_ms > cutoff_ms) return;
    ++count;
    const std::uint8_t* signature = record.envelope.signature.data();
    for (std::size_t lane = 0; lane < lanes.size(); ++lane) {
      std::uint64_t value = 0;
      for (std::size_t i = 0; i < 8; ++i) value = value << 8 | signature[8 * lane + i];
      lanes[lane] += value;
    }
  };
  if (roster_record_) add(*roster_record_);
  for (const auto& slot : reports_) {
    if (slot) add(*slot);
  }
  std::array<std::uint8_t, 4 + 8 * lanes.size()> input{};
  std::uint8_t* at = input.data();
  auto put = [&](std::uint64_t value, int bytes) {
    for (int shift = 8 * (bytes - 1); shift >= 0; shift -= 8) *at++ = static_cast<std::uint8_t>(value >> shift);
  };
  put(count, 4);
  for (const std::uint64_t lane : lanes) put(lane, 8);
  std::array<std::uint8_t, 16> summary{};
  crypto_generichash(summary.data(), summary.size(), input.data(), input.size(), nullptr, 0);
  summary_cache_ = SummaryCache{cutoff_ms, summary};
  return summary;
}

}  // namespace mesh::gossip
