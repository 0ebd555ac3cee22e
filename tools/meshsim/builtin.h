// The built-in scenarios (docs/SIMULATOR.md, "Built-in scenarios"): each a
// generated fleet, a timeline and the expectations that say the real
// gossip and verdict code did the right thing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tools/meshsim/error.h"
#include "tools/meshsim/scenario.h"

namespace mesh::sim {

struct BuiltinOptions {
  std::uint32_t nodes = 0;      // 0: the scenario's default
  std::uint32_t countries = 0;  // 0: the scenario's default
  std::uint64_t seed = 1;
  std::optional<DurationMs> duration_ms;  // overrides the scenario's length
};

// Names of every built-in, in a fixed order.
const std::vector<std::string>& builtin_names();

// The built-in `name` at the given size. Errors: unknown_scenario; invalid
// when the fleet is too small for the scenario (each needs at least 4
// servers per country so that a country can reach a quorum).
ScenarioResult<Scenario> builtin_scenario(std::string_view name, const BuiltinOptions& options);

}  // namespace mesh::sim
