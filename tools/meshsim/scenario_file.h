// Scenario files (TOML; format in docs/SIMULATOR.md, "Scenario files").
// Parsing is strict: unknown keys, wrong types and out-of-range values are
// errors whose message names the line and the field.
#pragma once

#include <string>
#include <string_view>

#include "tools/meshsim/error.h"
#include "tools/meshsim/scenario.h"

namespace mesh::sim {

// Parses scenario text. `source` names it in error messages (a path).
ScenarioResult<Scenario> parse_scenario(std::string_view text, const std::string& source);

// Reads and parses the file at `path`.
ScenarioResult<Scenario> load_scenario_file(const std::string& path);

}  // namespace mesh::sim
