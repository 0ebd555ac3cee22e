// The replay of every fuzz target over its committed inputs (replay_main.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace mesh::fuzz {

struct Target {
  const char* name;  // the folder under corpus/ and regressions/
  int (*run)(const std::uint8_t* data, std::size_t size);
};

// Every target, in tests/fuzz/CMakeLists.txt's order (a generated file).
extern const std::vector<Target> kTargets;

}  // namespace mesh::fuzz
