// The core's one source of randomness: xoshiro256** seeded through
// splitmix64 (Blackman & Vigna). Deterministic: the same seed gives the same
// sequence on every platform. Not for secrets (keys and nonces never come
// from here).
#pragma once

#include <cstdint>

#include "common/check.h"

namespace mesh::gossip {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) {
    for (auto& word : state_) word = splitmix64(seed);
  }

  std::uint64_t next() {
    const std::uint64_t result = rotl(state_[1] * 5, 7) * 9;
    const std::uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }

  // Uniform in [0, bound). REQUIRES: bound > 0. Rejection keeps it unbiased.
  std::uint64_t below(std::uint64_t bound) {
    MESH_CHECK(bound > 0, "Rng::below(0)");
    const std::uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
    std::uint64_t value = next();
    while (value >= limit) value = next();
    return value % bound;
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  static std::uint64_t splitmix64(std::uint64_t& x) {
    std::uint64_t z = (x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }

  std::uint64_t state_[4];
};

}  // namespace mesh::gossip
