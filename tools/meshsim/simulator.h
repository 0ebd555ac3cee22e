// The simulator (docs/SIMULATOR.md): runs every server of a scenario, each
// with the real GossipCore, record codecs, witness assignment and verdict
// Evaluator, on a virtual network and virtual time. One seed drives every
// random choice; the same scenario gives the same RunResult, byte for byte
// in --json. The only wall-clock read times the whole run (wall_seconds).
#pragma once

#include <cstddef>
#include <string>

#include "tools/meshsim/error.h"
#include "tools/meshsim/results.h"
#include "tools/meshsim/scenario.h"

namespace mesh::sim {

struct RunOptions {
  std::size_t snapshot_nodes = SIZE_MAX;  // nodes listed per snapshot (all are still compared)
  std::string command;                    // echoed in the result to reproduce the run
};

// Builds the world of `scenario` and runs it to its end. Errors: an
// inconsistent scenario (unknown server, bad roster...). Expectations that
// fail are not errors: they are in RunResult::expectations and `passed`.
ScenarioResult<RunResult> run_scenario(const Scenario& scenario, const RunOptions& options = {});

}  // namespace mesh::sim
