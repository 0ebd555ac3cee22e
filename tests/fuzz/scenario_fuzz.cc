// Fuzz target: meshsim scenario files (tools/meshsim/scenario_file.h,
// docs/SIMULATOR.md "Scenario files"). Input: the text of a scenario file.
//
// Properties:
// - an accepted scenario keeps every named bound of tools/meshsim/scenario.h:
//   servers, events, snapshots, expectations and link overrides within
//   their maxima, the duration within (0, kRunDurationMsMax];
// - events are sorted by time and snapshots ascending, as the simulator
//   requires;
// - parsing is a pure function: the same text parses to the same scenario
//   again (compared through its counts and event times).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "tests/fuzz/fuzz_support.h"
#include "tools/meshsim/scenario_file.h"

namespace {

using namespace mesh;
using namespace mesh::sim;

const std::string kSource = "fuzz.toml";

void check_accepted(const Scenario& s) {
  FUZZ_CHECK(s.duration_ms > 0 && s.duration_ms <= kRunDurationMsMax);
  FUZZ_CHECK(s.fleet.servers.size() <= kNodesMax && s.fleet.generated_nodes <= kNodesMax);
  FUZZ_CHECK(s.events.size() <= kEventsMax && s.snapshots.size() <= kSnapshotsMax);
  FUZZ_CHECK(s.expectations.size() <= kExpectationsMax);
  FUZZ_CHECK(s.link_overrides.size() < kLinkOverridesMax);
  FUZZ_CHECK(std::is_sorted(s.events.begin(), s.events.end(),
                            [](const Event& a, const Event& b) { return a.at_ms < b.at_ms; }));
  FUZZ_CHECK(std::is_sorted(s.snapshots.begin(), s.snapshots.end()));
}

void check_same(const Scenario& a, const Scenario& b) {
  FUZZ_CHECK(a.name == b.name && a.seed == b.seed && a.duration_ms == b.duration_ms);
  FUZZ_CHECK(a.start_unix_ms == b.start_unix_ms && a.params == b.params);
  FUZZ_CHECK(a.fleet.servers.size() == b.fleet.servers.size() && a.fleet.routes == b.fleet.routes);
  FUZZ_CHECK(a.events.size() == b.events.size() && a.snapshots == b.snapshots);
  FUZZ_CHECK(a.expectations.size() == b.expectations.size());
  for (std::size_t i = 0; i < a.events.size(); ++i) {
    FUZZ_CHECK(a.events[i].at_ms == b.events[i].at_ms && a.events[i].kind == b.events[i].kind);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = fuzz::text_of(data, size);
  auto scenario = parse_scenario(text, kSource);
  if (!scenario.ok()) return 0;
  check_accepted(*scenario);
  auto again = parse_scenario(text, kSource);
  FUZZ_CHECK(again.ok());
  check_same(*scenario, *again);
  return 0;
}
