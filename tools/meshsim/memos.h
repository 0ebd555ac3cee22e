// The simulator's memos of the pure work its cores share (gossip::SharedWork;
// docs/SIMULATOR.md, "Signatures", "Rosters", "Records"). The daemon, one
// node, uses the plain implementations.
//
// MemoVerifier: a SignatureVerifier that remembers each unique (key,
// message, signature) it has checked. Every simulated node
// still runs its full acceptance path and calls verify(); only the Ed25519
// arithmetic is shared, since its result is the same at every node. A
// memo entry matches only when key, signature and message bytes are all
// equal, so a tampered record is always checked for real.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <unordered_map>
#include <vector>

#include "gossip/store.h"
#include "gossip/verifier.h"
#include "node/agent/plans.h"

namespace mesh::sim {

inline constexpr std::size_t kMemoEntriesMax = 500'000;  // at the bound the memo starts over

class MemoVerifier final : public gossip::SignatureVerifier {
 public:
  bool verify(const PublicKey& key, ByteView message, const Signature& signature) override {
    ++calls_;
    std::uint64_t tag = 0;
    std::memcpy(&tag, signature.data(), sizeof tag);
    auto it = memo_.find(tag);
    if (it != memo_.end() && it->second.key == key && it->second.signature == signature &&
        it->second.message.size() == message.size() &&
        std::memcmp(it->second.message.data(), message.data(), message.size()) == 0) {
      return it->second.valid;
    }
    ++verifications_;
    const bool valid = verify_detached(key, message, signature);
    if (memo_.size() >= kMemoEntriesMax) memo_.clear();
    memo_[tag] = Entry{key, signature, Bytes(message.begin(), message.end()), valid};
    return valid;
  }

  std::uint64_t calls() const { return calls_; }
  std::uint64_t verifications() const { return verifications_; }

 private:
  struct Entry {
    PublicKey key;
    Signature signature;
    Bytes message;
    bool valid;
  };
  std::unordered_map<std::uint64_t, Entry> memo_;
  std::uint64_t calls_ = 0;
  std::uint64_t verifications_ = 0;
};

// MemoRosters: a RosterDecoder that decodes each unique roster payload once
// and hands every node the same immutable IndexedRoster. A node's roster
// decode then costs a byte comparison, and the fleet holds one copy of each
// roster (and of its member index) instead of one per node. Errors are
// decoded every time (they are rare and carry no shared state).
class MemoRosters final : public gossip::RosterDecoder {
 public:
  Result<std::shared_ptr<const gossip::IndexedRoster>, RosterError> decode(
      ByteView payload, std::uint64_t seq) override {
    ++calls_;
    for (const Entry& entry : memo_) {
      if (entry.seq == seq && entry.payload.size() == payload.size() &&
          std::memcmp(entry.payload.data(), payload.data(), payload.size()) == 0) {
        return entry.roster;
      }
    }
    ++decodes_;
    auto roster = plain_.decode(payload, seq);
    if (!roster.ok()) return roster;
    if (memo_.size() >= kRostersMax) memo_.erase(memo_.begin());
    memo_.push_back(Entry{seq, Bytes(payload.begin(), payload.end()), roster.value()});
    return roster;
  }

  std::uint64_t calls() const { return calls_; }
  std::uint64_t decodes() const { return decodes_; }

 private:
  static constexpr std::size_t kRostersMax = 16;  // a scenario signs a few versions
  struct Entry {
    std::uint64_t seq;
    Bytes payload;
    std::shared_ptr<const gossip::IndexedRoster> roster;
  };
  gossip::PlainRosterDecoder plain_;
  std::vector<Entry> memo_;
  std::uint64_t calls_ = 0;
  std::uint64_t decodes_ = 0;
};

// MemoRecords: a RecordInterner that hands every node the same immutable
// StoredRecord for byte-identical records (accepted without a decoded form).
// Each node still runs the full acceptance path; only the resulting value
// object is shared, so the fleet holds about one copy of each live record
// instead of one per node. Entries are weak: a record dies when the last
// node replaces it, and dead entries are swept as the table doubles.
class MemoRecords final : public gossip::RecordInterner {
 public:
  std::shared_ptr<const gossip::StoredRecord> intern(const EnvelopeView& accepted) override {
    ++calls_;
    std::uint64_t tag = 0;
    std::memcpy(&tag, accepted.signature.data(), sizeof tag);
    auto& slot = memo_[tag];
    if (auto held = slot.lock(); held != nullptr && held->envelope.raw.size() == accepted.raw.size() &&
                                 std::memcmp(held->envelope.raw.data(), accepted.raw.data(),
                                             accepted.raw.size()) == 0) {
      return held;
    }
    ++made_;
    auto made = gossip::make_stored_record(accepted, nullptr);
    slot = made;
    if (memo_.size() >= sweep_at_) {
      std::erase_if(memo_, [](const auto& entry) { return entry.second.expired(); });
      sweep_at_ = std::max<std::size_t>(2 * memo_.size(), 1024);
    }
    return made;
  }

  std::uint64_t calls() const { return calls_; }
  std::uint64_t made() const { return made_; }

 private:
  std::unordered_map<std::uint64_t, std::weak_ptr<const gossip::StoredRecord>> memo_;
  std::size_t sweep_at_ = 1024;
  std::uint64_t calls_ = 0;
  std::uint64_t made_ = 0;
};

// MemoPlans: one witness plan per (roster, epoch) for the whole fleet. A
// plan is a pure function of the roster and the epoch (O(servers^2) hashes
// to make), and every node holding the same roster holds the very same
// immutable object (MemoRosters), so nodes share plans by that pointer.
class MemoPlans final : public agent::PlanSource {
 public:
  std::shared_ptr<const verdict::WitnessPlan> plan(const std::shared_ptr<const Roster>& roster,
                                                   std::uint64_t epoch) override {
    ++calls_;
    for (const Entry& entry : memo_) {
      if (entry.roster == roster && entry.epoch == epoch) return entry.plan;
    }
    ++made_;
    // Plans two epochs behind are never asked for again.
    std::erase_if(memo_, [&](const Entry& entry) { return entry.roster == roster && entry.epoch + 2 < epoch; });
    if (memo_.size() >= kPlansMax) memo_.erase(memo_.begin());
    auto made = std::make_shared<const verdict::WitnessPlan>(verdict::plan_witnesses(*roster, epoch));
    memo_.push_back(Entry{roster, epoch, made});
    return made;
  }

  std::uint64_t calls() const { return calls_; }
  std::uint64_t made() const { return made_; }

 private:
  static constexpr std::size_t kPlansMax = 16;
  struct Entry {
    std::shared_ptr<const Roster> roster;
    std::uint64_t epoch;
    std::shared_ptr<const verdict::WitnessPlan> plan;
  };
  std::vector<Entry> memo_;
  std::uint64_t calls_ = 0;
  std::uint64_t made_ = 0;
};

}  // namespace mesh::sim
