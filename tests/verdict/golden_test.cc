// Golden file: a 20-server fleet in 4 countries (5 each, 3 witnesses per
// country) where Russia blocks de-1 and nl-1, us-5 is powered off for a
// while and us-2's listener fails, evaluated at several times. The bytes
// are pinned in golden/country_block_20.json.
//
// Regenerate after an intended change (and review the diff):
//   MESHNODE_UPDATE_GOLDEN=1 ./verdict_test -tc="golden*"
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/verdict/fixtures.h"
#include "verdict/engine.h"

using namespace mesh;
using namespace mesh::verdict;
using namespace mesh::verdict::testing;

namespace {

const char* kGoldenPath = MESHNODE_SOURCE_DIR "/tests/verdict/golden/country_block_20.json";

// The scenario's evaluations, as one JSON array (pretty canonical form).
std::string run_scenario() {
  Roster roster = make_roster({"DE", "NL", "RU", "US"}, {5, 5, 5, 5}, 3);
  const std::uint32_t de1 = 0, nl1 = 5, us2 = 16, us5 = 19;
  bool block_on = true;
  ProbeSim sim(roster);
  sim.reachable = [&](std::uint32_t observer, std::uint32_t target) {
    bool russian = roster.servers[observer].country == "RU";
    return !(block_on && russian && (target == de1 || target == nl1));
  };
  Evaluator evaluator(roster);
  std::string out = "[\n";
  bool first = true;
  auto snapshot = [&](DurationMs minutes) {
    UnixMs now = kT0 + minutes * 60'000;
    sim.run_until(now, evaluator);
    Evaluation evaluation = evaluator.evaluate(now);
    CHECK(evaluation == evaluate(roster, sim.published(), now));
    out += (first ? "" : ",\n") + to_canonical_json(evaluation, 1);
    first = false;
  };
  snapshot(0);   // nothing reported yet: every server no_data
  snapshot(2);   // Russian witnesses at streak 2: not yet a vote
  snapshot(4);   // streak 4: de-1 and nl-1 unreachable, RU 3 of 3
  sim.powered[us5] = false;
  snapshot(6);   // us-5 off: no fresh streak yet, its last report still fresh
  snapshot(10);  // us-5 unreachable and no_data
  sim.listener_ok[us2] = false;
  snapshot(12);  // us-2 unavailable by self-check
  snapshot(48);  // just after the epoch switch (kT0 is 13 min 20 s into an epoch)
  block_on = false;
  sim.powered[us5] = true;
  sim.listener_ok[us2] = true;
  snapshot(50);  // healed by the first successful probes and reports
  return out + "\n]\n";
}

}  // namespace

TEST_CASE("golden: country block in a 20-server fleet") {
  const std::string actual = run_scenario();
  if (std::getenv("MESHNODE_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(kGoldenPath, std::ios::binary) << actual;
    MESSAGE("golden file rewritten: " << kGoldenPath);
    return;
  }
  std::ifstream file(kGoldenPath, std::ios::binary);
  REQUIRE_MESSAGE(file.good(), "missing " << kGoldenPath << " (MESHNODE_UPDATE_GOLDEN=1)");
  std::stringstream expected;
  expected << file.rdbuf();
  CHECK(actual == expected.str());
}
