// The deterministic 64-bit hashes behind the witness assignment
// (docs/VERDICTS.md, "Who probes whom"). They are part of the protocol:
// every node must compute the same values, so never change them without a
// roster-wide upgrade.
#pragma once

#include <cstdint>
#include <string_view>

#include "common/rng.h"  // splitmix64

namespace mesh::verdict {

// FNV-1a, 64-bit, over the bytes of `text`.
constexpr std::uint64_t fnv1a64(std::string_view text) {
  std::uint64_t hash = 0xcbf29ce484222325ull;
  for (char c : text) {
    hash ^= static_cast<std::uint8_t>(c);
    hash *= 0x100000001b3ull;
  }
  return hash;
}

// Per-epoch key: mixes the epoch number once so that scores of different
// epochs are unrelated.
constexpr std::uint64_t epoch_key(std::uint64_t epoch) {
  return splitmix64(epoch ^ 0x6d6573686e6f6465ull);  // "meshnode"
}

// Rendezvous score of observer for target in an epoch; higher wins.
// Inputs are fnv1a64 of the server ids.
constexpr std::uint64_t rendezvous_score(std::uint64_t epoch_key_value,
                                         std::uint64_t target_hash,
                                         std::uint64_t observer_hash) {
  return splitmix64(splitmix64(epoch_key_value ^ target_hash) ^ observer_hash);
}

// The order in which targets draw their witnesses in an epoch.
constexpr std::uint64_t target_order_key(std::uint64_t epoch_key_value,
                                         std::uint64_t target_hash) {
  return splitmix64(target_hash ^ splitmix64(epoch_key_value));
}

}  // namespace mesh::verdict
