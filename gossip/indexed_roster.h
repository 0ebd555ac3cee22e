// A decoded roster with an O(1) member index. Immutable once built, so one
// instance can be shared: by a core's store across roster lookups, and by a
// simulator among all its nodes that hold the same roster (RosterDecoder,
// gossip/verifier.h).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <string_view>
#include <vector>

#include "gossip/link.h"
#include "record/roster.h"

namespace mesh::gossip {

// Roster member id -> roster index with no allocation per lookup: open
// addressing over a power-of-two table of (32-bit hash tag, index + 1); a hit
// is confirmed against the roster's own id.
class MemberIndex {
 public:
  void build(const Roster& roster);
  std::optional<std::uint32_t> find(const Roster& roster, std::string_view id) const;

 private:
  std::vector<std::uint64_t> slots_;  // (tag << 32) | (index + 1); 0 = empty
  std::size_t mask_ = 0;
};

struct IndexedRoster {
  explicit IndexedRoster(Roster decoded);

  // The roster index of member `id`, or nullopt. O(1).
  std::optional<std::uint32_t> index_of(std::string_view id) const { return members.find(roster, id); }
  // The members whose key has key id `id` (gossip/link.h), indices
  // ascending: usually one, none for a stranger, more if keys collide in
  // their first 4 bytes (the AEAD then tells them apart).
  std::span<const std::pair<KeyId, std::uint32_t>> with_key_id(KeyId id) const;
  // The member holding `key`, or nullopt.
  std::optional<std::uint32_t> index_of_key(const PublicKey& key) const;

  Roster roster;
  MemberIndex members;
  std::vector<std::pair<KeyId, std::uint32_t>> by_key_id;  // sorted
};

}  // namespace mesh::gossip
