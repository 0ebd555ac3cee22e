// RecordStore: the latest record per (kind, origin) and the acceptance path
// every record goes through, from the network, from publish() or from
// storage (docs/PROTOCOL.md, Gossip, "Acceptance"):
//   size -> envelope decode -> kind -> origin -> timestamp skew ->
//   not older than held (cheap, before any signature) -> signature ->
//   payload decode -> store.
// Higher seq wins; at equal seq the lexicographically smaller raw bytes win,
// so every node converges on the same record even against an equivocating
// origin. Reports are held only while a roster is, and only for its members.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
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

using RecordHash = std::array<std::uint8_t, 32>;  // BLAKE2b-256 of the raw record

struct StoredRecord {
  Envelope envelope;
  RecordHash hash{};
  std::optional<Report> report;  // kind report only, when the store holds decoded reports

  std::uint32_t hash32() const;  // first 4 bytes of `hash`, big-endian
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

// Hashes std::string and std::string_view alike, so lookups by view do not allocate.
struct IdHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view id) const { return std::hash<std::string_view>{}(id); }
};

class RecordStore {
 public:
  // `verifier` and `counters` must outlive the store. `hold_decoded_reports`
  // as in CoreConfig: false keeps StoredRecord::report empty.
  RecordStore(const PublicKey& operator_key, SignatureVerifier& verifier, Counters& counters,
              bool hold_decoded_reports = true);

  // Runs the acceptance path on `raw` at time `now`. Counts the outcome in
  // exactly one records_* counter. Errors: RecordError; a duplicate and a
  // stale record both give `stale` (the counters tell them apart, and
  // `note` says which). Nothing changes unless the result is ok.
  Result<Acceptance, RecordError> accept(Bytes raw, UnixMs now, AcceptNote* note = nullptr);

  const Roster* roster() const { return roster_.get(); }
  // The same roster, shared: stays valid after a newer roster replaces it.
  std::shared_ptr<const Roster> shared_roster() const { return roster_; }
  const StoredRecord* roster_record() const { return roster_record_ ? &*roster_record_ : nullptr; }
  // The report held for roster index `index`, or null.
  const StoredRecord* report(std::uint32_t index) const;
  const StoredRecord* find(RecordKind kind, std::uint32_t origin_index) const;
  // The roster index of member `id`, or nullopt (no roster, or not a member).
  // O(1): a hash table built once per roster (Roster::index_of is a linear
  // scan, too slow for the per-record path).
  std::optional<std::uint32_t> index_of(std::string_view id) const;
  std::size_t size() const;

  // BLAKE2b-256 over (kind, origin id, seq, record hash) of every held
  // record sorted by (kind, origin id). Cached until the next change.
  std::array<std::uint8_t, 32> digest() const;

 private:
  Result<Acceptance, RecordError> accept_roster(Envelope envelope, UnixMs now, AcceptNote& note);
  Result<Acceptance, RecordError> accept_report(Envelope envelope, UnixMs now, AcceptNote& note);
  // Held-vs-incoming ordering; counts and returns stale when not newer.
  Status<RecordError> check_newer(const StoredRecord* held, const Envelope& incoming,
                                  AcceptNote& note);
  std::vector<std::pair<RecordKind, ServerId>> install_roster(Roster roster);
  DurationMs max_clock_skew_ms() const;
  Error<RecordError> refuse(RecordError code, std::uint64_t Counters::*counter, std::string message);

  PublicKey operator_key_;
  SignatureVerifier& verifier_;
  bool hold_decoded_reports_ = true;
  Counters& counters_;
  std::shared_ptr<const Roster> roster_;
  std::optional<StoredRecord> roster_record_;
  std::vector<std::optional<StoredRecord>> reports_;  // by roster index
  std::unordered_map<std::string, std::uint32_t, IdHash, std::equal_to<>> index_by_id_;  // roster_'s members
  mutable std::optional<std::array<std::uint8_t, 32>> digest_cache_;
};

}  // namespace mesh::gossip
