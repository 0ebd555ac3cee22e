// Deterministic pseudo-randomness for the pure cores and the simulator:
// the splitmix64 mixer (Steele, Lea, Flood 2014) and the xoshiro256**
// generator (Blackman & Vigna) seeded through it. The same seed gives the
// same sequence on every platform. Not for secrets: keys and nonces never
// come from here. Callers pass a seed in; nothing here reads the OS.
#pragma once

#include <cstdint>

#include "common/check.h"

namespace mesh {

// The splitmix64 finalizer: a bijective mixer of one 64-bit word. Part of
// the witness assignment (verdict/hash.h): never change it.
constexpr std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Derives a seed from a parent seed and a label (a node index, a purpose),
// so that one run seed gives independent streams.
constexpr std::uint64_t mix_seed(std::uint64_t seed, std::uint64_t label) {
  std::uint64_t z = seed ^ (label + 0x9e3779b97f4a7c15ull + (seed << 6) + (seed >> 2));
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

class Rng {
 public:
  explicit Rng(std::uint64_t seed) {
    for (auto& word : state_) word = next_splitmix(seed);
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
  // splitmix64 as a generator: advances `x` and returns the mixed value.
  static std::uint64_t next_splitmix(std::uint64_t& x) {
    const std::uint64_t value = splitmix64(x);
    x += 0x9e3779b97f4a7c15ull;
    return value;
  }

  std::uint64_t state_[4];
};

}  // namespace mesh
