// An epoch switch must never flap a verdict: with every server probing
// exactly its probe_targets(), a blocked server stays unreachable and a
// healthy one ok at every minute across several switches.
#include <doctest/doctest.h>

#include "tests/verdict/fixtures.h"
#include "verdict/engine.h"

using namespace mesh;
using namespace mesh::verdict;
using namespace mesh::verdict::testing;

TEST_CASE("a blocked server stays unreachable across epoch boundaries, a healthy one ok") {
  Roster roster = make_roster({"DE", "NL", "RU", "US"}, {5, 5, 5, 5}, 3);
  roster.params.epoch_ms = 1'200'000;  // 20 min, so the run crosses several switches
  ProbeSim sim(roster);
  const std::uint32_t ru = 2;  // country index of RU in the sorted list
  const std::uint32_t blocked = 0;  // de-1, blocked in Russia
  sim.reachable = [&](std::uint32_t observer, std::uint32_t target) {
    return !(target == blocked && roster.servers[observer].country == "RU");
  };
  Evaluator evaluator(roster);
  sim.run_until(kT0 + 600'000, evaluator);  // settle: streaks built
  int switches = 0;
  std::uint64_t last_epoch = 0;
  for (UnixMs now = kT0 + 600'000; now < kT0 + 6'000'000; now += 60'000) {
    sim.run_until(now, evaluator);
    Evaluation evaluation = evaluator.evaluate(now);
    CAPTURE(now);
    if (last_epoch != 0 && evaluation.epoch != last_epoch) ++switches;
    last_epoch = evaluation.epoch;
    const ServerVerdict& target = evaluation.servers[blocked];
    CHECK(target.status == ServerStatus::unreachable);
    CHECK(target.by_country[ru].failing >= 3);
    CHECK(target.by_country[ru].country == "RU");
    for (std::uint32_t s = 1; s < roster.servers.size(); ++s) {
      CHECK(evaluation.servers[s].status == ServerStatus::ok);
      CHECK(evaluation.servers[s].missing == 0);
    }
    CHECK(to_canonical_json(evaluation) ==
          to_canonical_json(evaluate(roster, sim.published(), now)));
  }
  CHECK(switches >= 4);
}

TEST_CASE("counterfactual: without the warm-up the same switch flaps") {
  // Guards the test above: were incoming witnesses to start probing only at
  // the switch, their streaks would be too short and de-1 would look ok.
  Roster roster = make_roster({"DE", "NL", "RU", "US"}, {5, 5, 5, 5}, 3);
  roster.params.epoch_ms = 1'200'000;
  ProbeSim sim(roster);
  sim.warm_up = false;
  sim.reachable = [&](std::uint32_t observer, std::uint32_t target) {
    return !(target == 0 && roster.servers[observer].country == "RU");
  };
  Evaluator evaluator(roster);
  int flapped = 0;
  for (UnixMs now = kT0 + 600'000; now < kT0 + 6'000'000; now += 60'000) {
    sim.run_until(now, evaluator);
    if (evaluator.evaluate(now).servers[0].status != ServerStatus::unreachable) ++flapped;
  }
  CHECK(flapped > 0);
}
