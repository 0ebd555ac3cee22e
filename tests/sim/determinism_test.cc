// Same seed and scenario: byte-identical JSON. Another seed: another run.
#include <doctest/doctest.h>

#include "tools/meshsim/builtin.h"
#include "tools/meshsim/output.h"
#include "tools/meshsim/simulator.h"

namespace mesh::sim {
namespace {

RunResult run(std::uint64_t seed) {
  auto scenario = builtin_scenario("country-block", {20, 5, seed, 8 * 60'000});
  REQUIRE(scenario.ok());
  scenario->snapshots = {7 * 60'000};
  scenario->expectations.clear();
  auto result = run_scenario(scenario.value(), {SIZE_MAX, "determinism"});
  REQUIRE(result.ok());
  return std::move(result.value());
}

TEST_CASE("the same seed gives byte-identical JSON") {
  const std::string first = to_json(run(7), false);
  const std::string second = to_json(run(7), false);
  CHECK(first == second);
  CHECK(first.find("\"digest\"") != std::string::npos);  // snapshots are in it
}

TEST_CASE("another seed gives another run") {
  RunResult a = run(7);
  RunResult b = run(8);
  CHECK(a.counters.at("bytes_sent") != b.counters.at("bytes_sent"));
  CHECK(to_json(a, false) != to_json(b, false));
  // Different keys, so different record digests.
  CHECK(a.snapshots.at(0).nodes.at(0).digest_hex != b.snapshots.at(0).nodes.at(0).digest_hex);
}

TEST_CASE("timing is printed only on request") {
  RunResult a = run(7);
  CHECK(to_json(a, false).find("wall_seconds") == std::string::npos);
  CHECK(to_json(a, true).find("wall_seconds") != std::string::npos);
}

}  // namespace
}  // namespace mesh::sim
