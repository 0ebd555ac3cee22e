// The run's output (docs/SIMULATOR.md, "Output"): JSON (keys sorted,
// deterministic: the same run gives the same bytes) or a human summary.
#pragma once

#include <string>

#include "tools/meshsim/results.h"

namespace mesh::sim {

// JSON of `result`. `timing` adds wall_seconds (which differs run to run;
// without it the output is byte-identical for the same seed and input).
std::string to_json(const RunResult& result, bool timing);

// A few lines per measurement and one per expectation; on failure, the
// seed and the command that reproduces the run.
std::string to_summary(const RunResult& result, bool timing);

}  // namespace mesh::sim
