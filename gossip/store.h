// RecordStore: the latest record per (kind, origin) and the acceptance path
// every record goes through, from the network, from publish() or from
// storage (docs/PROTOCOL.md, Gossip, "Acceptance"):
//   size -> envelope decode -> kind -> origin -> timestamp skew ->
//   not older than held (cheap, before any signature) -> signature ->
//   payload decode -> store.
// Higher seq wins; at equal seq the lexicographically smaller raw bytes win,
// so every node converges on the same record even against an equivocating
// origin. Reports are held only while a roster is, and only for its members.
//
// The acceptance path reads the incoming bytes in place; only an accepted
// record is copied, once, into a shared immutable StoredRecord that the
// outbox and the shell's Effects point into (RecordBytes) without copying.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/bytes.h"
#include "common/result.h"
#include "common/time.h"
#include "gossip/counters.h"
#include "gossip/verifier.h"
#include "record/envelope.h"
#include "record/report.h"
#include "record/roster.h"

namespace mesh::gossip {

// The exact bytes of a held record, shared: they stay valid after the store
// replaces the record (the outbox and Effects::persist hold them this way).
using RecordBytes = std::shared_ptr<const Bytes>;

struct StoredRecord {
  Envelope envelope;              // payload empty (it lies inside raw)
  std::unique_ptr<Report> report; // kind report only, when the store holds decoded reports

  // The record's fingerprint in SYNC entries: the first 4 bytes of its
  // signature, big-endian (docs/PROTOCOL.md, Gossip, "Digest").
  std::uint32_t fingerprint32() const;
};

// The same from a signature (what the API lists per held record).
std::uint32_t fingerprint32(const Signature& signature);

// `record`'s raw bytes, sharing ownership of the whole record.
RecordBytes bytes_of(const std::shared_ptr<const StoredRecord>& record);

// The StoredRecord of an accepted envelope: one copy of its bytes.
std::shared_ptr<const StoredRecord> make_stored_record(const EnvelopeView& accepted,
                                                       std::unique_ptr<Report> report);

// Makes the StoredRecord of an accepted roster, or of a report held without a
// decoded form.
// It is an immutable value of the record's bytes alone, so a simulator may
// hand all its nodes one object for byte-identical records
// (tools/meshsim/memos.h); the daemon makes its own (make_stored_record).
class RecordInterner {
 public:
  virtual ~RecordInterner() = default;
  // REQUIRES: `accepted` passed the acceptance path. The result's
  // envelope.raw equals accepted.raw byte for byte and its report is null.
  virtual std::shared_ptr<const StoredRecord> intern(const EnvelopeView& accepted) = 0;
};

class PlainInterner final : public RecordInterner {
 public:
  std::shared_ptr<const StoredRecord> intern(const EnvelopeView& accepted) override {
    return make_stored_record(accepted, nullptr);
  }
};

// The pure work a core may share with others (gossip/verifier.h): null
// members mean the plain implementations, as the daemon uses. Non-null ones
// must outlive the core.
struct SharedWork {
  SignatureVerifier* verifier = nullptr;
  RosterDecoder* rosters = nullptr;
  RecordInterner* records = nullptr;
};

struct Acceptance {
  RecordKind kind = RecordKind::report;
  std::uint32_t origin_index = 0;  // in the roster held after acceptance; 0 for the roster
  bool roster_changed = false;
  std::vector<std::pair<RecordKind, ServerId>> erased;  // reports dropped by a roster change
};

// What accept() learnt of a record even when refusing it.
struct AcceptNote {
  bool duplicate = false;  // exactly the held record
  bool resolved = false;   // kind and origin below are known (the origin is a member / operator)
  RecordKind kind = RecordKind::report;
  std::uint32_t origin_index = 0;
};

class RecordStore {
 public:
  // `verifier`, `rosters`, `records` and `counters` must outlive the store.
  // `hold_decoded_reports` as in CoreConfig: false keeps StoredRecord::report
  // empty (the payload is still checked in full).
  RecordStore(const PublicKey& operator_key, SignatureVerifier& verifier, RosterDecoder& rosters,
              RecordInterner& records, Counters& counters, bool hold_decoded_reports = true);

  // Runs the acceptance path on `raw` at time `now`. Counts the outcome in
  // exactly one records_* counter. Errors: RecordError; a duplicate and a
  // stale record both give `stale` (the counters tell them apart, and
  // `note` says which). Nothing changes unless the result is ok.
  Result<Acceptance, RecordError> accept(ByteView raw, UnixMs now, AcceptNote* note = nullptr);

  const Roster* roster() const { return roster_ ? &roster_->roster : nullptr; }
  // The same roster, shared: stays valid after a newer roster replaces it.
  std::shared_ptr<const Roster> shared_roster() const {
    return roster_ ? std::shared_ptr<const Roster>(roster_, &roster_->roster) : nullptr;
  }
  const StoredRecord* roster_record() const { return roster_record_.get(); }
  // The report held for roster index `index`, or null.
  const StoredRecord* report(std::uint32_t index) const;
  const StoredRecord* find(RecordKind kind, std::uint32_t origin_index) const;
  // The same record, shared (for queueing its bytes), or null.
  std::shared_ptr<const StoredRecord> shared(RecordKind kind, std::uint32_t origin_index) const;
  // The roster index of member `id`, or nullopt (no roster, or not a member). O(1).
  std::optional<std::uint32_t> index_of(std::string_view id) const;
  // The held roster with its indexes, or null.
  const IndexedRoster* indexed_roster() const { return roster_.get(); }
  std::size_t size() const;

  // BLAKE2b-256 over (kind, origin id, seq, signature) of every held record
  // sorted by (kind, origin id). Cached until the next change.
  std::array<std::uint8_t, 32> digest() const;
  // BLAKE2b-128 over (kind, origin index, seq, first 16 bytes of the
  // signature) of every held record with timestamp_ms <= cutoff_ms, roster
  // first, then reports by index: the SYNC round's opening (SUMMARY). Two
  // nodes on one roster holding the same records up to the cutoff get the
  // same summary. The last one is kept until a change at or before its
  // cutoff: a node's own round and the rounds its peers open at the same
  // cutoff then hash once (at N = 1000 a summary hashes 29 KB).
  std::array<std::uint8_t, 16> summary(UnixMs cutoff_ms) const;

 private:
  Result<Acceptance, RecordError> accept_roster(const EnvelopeView& envelope, UnixMs now,
                                                AcceptNote& note);
  Result<Acceptance, RecordError> accept_report(const EnvelopeView& envelope, UnixMs now,
                                                AcceptNote& note);
  // Held-vs-incoming ordering; counts and returns stale when not newer.
  Status<RecordError> check_newer(const StoredRecord* held, const EnvelopeView& incoming,
                                  AcceptNote& note);
  std::vector<std::pair<RecordKind, ServerId>> install_roster(std::shared_ptr<const IndexedRoster> next);
  DurationMs max_clock_skew_ms() const;
  Error<RecordError> refuse(RecordError code, std::uint64_t Counters::*counter, std::string message);

  PublicKey operator_key_;
  SignatureVerifier& verifier_;
  RosterDecoder& rosters_;
  RecordInterner& records_;
  bool hold_decoded_reports_ = true;
  Counters& counters_;
  std::shared_ptr<const IndexedRoster> roster_;
  std::shared_ptr<const StoredRecord> roster_record_;
  std::vector<std::shared_ptr<const StoredRecord>> reports_;  // by roster index
  mutable std::optional<std::array<std::uint8_t, 32>> digest_cache_;
  struct SummaryCache {
    UnixMs cutoff_ms = 0;
    std::array<std::uint8_t, 16> value{};
  };
  mutable std::optional<SummaryCache> summary_cache_;
};

}  // namespace mesh::gossip
