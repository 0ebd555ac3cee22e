// Each built-in scenario, run on the simulator with the real gossip core,
// codecs and verdict engine, must meet every one of its expectations. On a
// failure the seed and the meshsim command that reproduce it are printed.
#include <doctest/doctest.h>

#include <string>

#include "tools/meshsim/builtin.h"
#include "tools/meshsim/scenario_file.h"
#include "tools/meshsim/simulator.h"

namespace mesh::sim {
namespace {

std::string reproduce(const std::string& name, const BuiltinOptions& options) {
  return "meshsim --scenario " + name + " --nodes " + std::to_string(options.nodes) +
         " --countries " + std::to_string(options.countries) + " --seed " +
         std::to_string(options.seed) +
         (options.duration_ms ? " --duration " + std::to_string(*options.duration_ms) + "ms" : "");
}

// Runs a built-in and checks its expectations, except those named in
// `reported` (gossip performance targets: measured and printed, see below).
RunResult run_builtin(const std::string& name, BuiltinOptions options,
                      const std::string& reported = "") {
  auto scenario = builtin_scenario(name, options);
  REQUIRE_MESSAGE(scenario.ok(), (scenario.ok() ? std::string() : scenario.message()));
  auto result = run_scenario(scenario.value(), {0, reproduce(name, options)});
  REQUIRE_MESSAGE(result.ok(), (result.ok() ? std::string() : result.message()));
  for (const ExpectationResult& e : result->expectations) {
    INFO("seed " << options.seed << "; reproduce with: " << result->command);
    if (!reported.empty() && e.text.starts_with(reported)) {
      WARN_MESSAGE(e.passed, e.text << ": " << e.detail);
    } else {
      CHECK_MESSAGE(e.passed, e.text << ": " << e.detail);
    }
  }
  return std::move(result.value());
}

std::uint64_t counter(const RunResult& result, const std::string& name) {
  auto it = result.counters.find(name);
  if (it != result.counters.end()) return it->second;
  auto net = result.network.find(name);
  return net != result.network.end() ? net->second : 0;
}

TEST_CASE("country-block") {
  RunResult r = run_builtin("country-block", {40, 5, 7, {}});
  CHECK(r.false_verdicts == 0);
  CHECK(counter(r, "frames_blocked") > 0);
}

TEST_CASE("country-block-200") {
  // 200 nodes; the verdict must show the split: the blocking country's
  // witnesses all failing, the others not.
  auto scenario = builtin_scenario("country-block", {200, 5, 7, 16 * 60'000});
  REQUIRE(scenario.ok());
  scenario->snapshots = {15 * 60'000};
  auto result = run_scenario(scenario.value(), {3, "meshsim --scenario country-block --nodes 200 --countries 5 --seed 7 --duration 16m"});
  REQUIRE(result.ok());
  for (const ExpectationResult& e : result->expectations) {
    if (e.text.find("29m") != std::string::npos || e.text.find("30m") != std::string::npos) continue;
    CHECK_MESSAGE(e.passed, e.text << ": " << e.detail << " (seed 7)");
  }
  REQUIRE(result->snapshots.size() == 1);
  const Snapshot& snapshot = result->snapshots[0];
  CHECK(snapshot.running_nodes == 200);
  REQUIRE(!snapshot.nodes.empty());
  const ServerBrief& blocked = snapshot.nodes[0].servers[0];  // de-1
  CHECK(blocked.id == "de-1");
  CHECK(blocked.status == verdict::ServerStatus::unreachable);
  for (const verdict::CountryTally& row : blocked.by_country) {
    INFO("country " << row.country << " failing " << row.failing << " of " << row.eligible);
    if (row.country == "US") CHECK((row.failing == row.eligible && row.failing >= 3));
    else CHECK(row.failing == 0);
  }
}

// 10% loss on every link. Gossip rides TCP: no frame is lost, lost
// packets are sent again, and records still reach every node within the
// dissemination bound.
TEST_CASE("lossy") {
  RunResult r = run_builtin("lossy", {30, 5, 3, {}});
  CHECK(r.false_verdicts == 0);
  CHECK(r.gossip_loss == "stream");
  CHECK(counter(r, "frames_lost") == 0);
  CHECK(r.tcp.at("retransmissions") > 0);
  CHECK(r.tcp.at("syn_retries") > 0);
  CHECK(r.dissemination.completed > 0);
  CHECK(r.dissemination.rounds_p99 <= r.dissemination.rounds_bound);
}

// The same loss with every gossip frame a datagram: the repair paths carry
// it, and no verdict is false.
TEST_CASE("lossy-frames") {
  RunResult r = run_builtin("lossy-frames", {30, 5, 3, {}});
  CHECK(r.false_verdicts == 0);
  CHECK(r.gossip_loss == "frames");
  CHECK(counter(r, "frames_lost") > 0);
  CHECK(r.tcp.at("handshakes") == 0);
  CHECK(counter(r, "grafts_sent") > 0);
}

// A country blocks a share of the fleet abroad: the blocked servers, and
// only they, are unreachable on every node; after the lift all are ok, and
// the blocking country's servers were ok throughout (four seeds each: at
// seed 4 the lift of the 80% block made a server of the blocking country
// unreachable before results carried their recovery, docs/VERDICTS.md rule 6;
// at seed 3 the 80% block did at its start when a blocking node published
// its first failures of a second country a change gap late: confirmation.h,
// kFirstFailureGapMs).
TEST_CASE("mass-block") {
  for (const char* name : {"mass-block-20", "mass-block-60", "mass-block-80"}) {
    for (std::uint64_t seed : {1u, 2u, 3u, 4u}) {
      CAPTURE(name);
      RunResult r = run_builtin(name, {30, 5, seed, {}});
      CHECK(r.false_verdicts == 0);
      CHECK(counter(r, "frames_blocked") > 0);
    }
  }
}

// The 80% block at N = 100 in 5 countries: a success from a healthy
// node's last report, older than the block, read as its country getting
// through made a server of the blocking country unreachable for one check
// 30 s after the block, at seeds 1-3 (until 2026-12-06: docs/VERDICTS.md
// rule 6, outdated successes).
TEST_CASE("mass-block-100") {
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    RunResult r = run_builtin("mass-block-80", {100, 5, seed, {}});
    CHECK(r.false_verdicts == 0);
  }
}

// Splits that cut through every country: no verdict on either side.
TEST_CASE("partition-split") {
  for (const char* name : {"partition-half", "partition-uneven"}) {
    for (std::uint64_t seed : {1u, 2u, 3u}) {
      CAPTURE(name);
      RunResult r = run_builtin(name, {30, 5, seed, {}});
      CHECK(r.false_verdicts == 0);
    }
  }
}

TEST_CASE("sni-block") {
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    RunResult r = run_builtin("sni-block", {20, 5, seed, {}});
    CHECK(r.false_verdicts == 0);
  }
}

TEST_CASE("one-way-block") {
  for (std::uint64_t seed : {1u, 2u}) {
    RunResult r = run_builtin("one-way-block", {30, 5, seed, {}});
    CHECK(r.false_verdicts == 0);
  }
}

// The convergence check pauses nothing and can fail: inside a partition the
// sides cannot hold each other's records; a few minutes after the heal
// they do.
TEST_CASE("digests_agree fails inside a partition and holds after the heal") {
  auto scenario = parse_scenario(R"(
duration = "16m"
[fleet]
nodes = 12
countries = 3
[[event]]
at = "2m"
kind = "partition"
groups = [["DE"], ["NL", "FR"]]
[[event]]
at = "8m"
kind = "heal"
[[expect]]
kind = "digests_agree"
at = "5m"
to = "7m"
[[expect]]
kind = "digests_agree"
at = "12m"
to = "15m"
)", "converge.toml");
  REQUIRE_MESSAGE(scenario.ok(), (scenario.ok() ? std::string() : scenario.message()));
  auto result = run_scenario(scenario.value());
  REQUIRE(result.ok());
  REQUIRE(result->expectations.size() == 2);
  CHECK_FALSE(result->expectations[0].passed);
  CHECK(result->expectations[0].detail.find("running nodes lag") != std::string::npos);
  CHECK_MESSAGE(result->expectations[1].passed, result->expectations[1].detail);
  CHECK(result->healthy_reports > 0);
}

// Issue 36's splits (docs/SIMULATOR.md, "Built-in scenarios"): no false
// and no missed verdict, seeds 1-3.
TEST_CASE("border-partition") {
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    RunResult r = run_builtin("border-partition", {30, 3, seed, {}});
    CHECK(r.false_verdicts == 0);
    CHECK(r.missed_verdicts == 0);
    // Up once and down once: a split is one event, not a flicker.
    CHECK(r.partitioned_flips_max >= 1);
    CHECK(r.partitioned_flips_max <= 2);
  }
}

// The country whose own connections are dropped finds every blocked server
// within the detection bound, while its gossip flows on the connections
// opened towards it.
TEST_CASE("one-way-country") {
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    RunResult r = run_builtin("one-way-country", {30, 5, seed, {}});
    CHECK(r.missed_verdicts == 0);
    // The blocked country's nodes answer on the connections opened to them.
    CHECK(r.tcp.at("frames_on_adopted") > 0);
    for (const ExpectationResult& e : r.expectations) {
      if (!e.time_ms || e.text.find("unreachable") == std::string::npos) continue;
      CAPTURE(e.text);
      CHECK(*e.time_ms <= r.detection_bound_ms);
    }
  }
}

TEST_CASE("two-censors") {
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    RunResult r = run_builtin("two-censors", {40, 5, seed, {}});
    CHECK(r.false_verdicts == 0);
    CHECK(r.missed_verdicts == 0);
  }
}

TEST_CASE("flapping-service") {
  for (std::uint64_t seed : {1u, 2u}) run_builtin("flapping-service", {20, 5, seed, {}});
}

// Confirmations within their budget (node/agent/confirmation.h): one
// observer failing half its probes of one target for an hour, and a target
// failing 15 s of every minute, make no verdict.
TEST_CASE("flaky-observer") { run_builtin("flaky-observer", {20, 5, 1, {}}); }
TEST_CASE("flapping-target") { run_builtin("flapping-target", {20, 5, 1, {}}); }

TEST_CASE("unreliable-witness") {
  RunResult r = run_builtin("unreliable-witness", {40, 5, 5, {}});
  CHECK(r.false_verdicts == 0);
}

TEST_CASE("agent-stop") { run_builtin("agent-stop", {20, 5, 11, {}}); }

TEST_CASE("rolling-restart") {
  RunResult r = run_builtin("rolling-restart", {30, 5, 41, {}});
  CHECK(r.false_verdicts == 0);
}

TEST_CASE("service-down") { run_builtin("service-down", {20, 5, 13, {}}); }

TEST_CASE("partition-heal") {
  RunResult r = run_builtin("partition-heal", {30, 5, 17, {}});
  CHECK(counter(r, "syncs_received") > 0);
}

TEST_CASE("restart-catch-up") {
  RunResult r = run_builtin("restart-catch-up", {20, 5, 19, {}});
  CHECK(counter(r, "frames_to_stopped_agent") > 0);
}

TEST_CASE("roster-change") {
  RunResult r = run_builtin("roster-change", {20, 5, 23, {}});
  CHECK(r.nodes == 22);
}

TEST_CASE("forged-injection") {
  RunResult r = run_builtin("forged-injection", {20, 5, 29, {}});
  CHECK(counter(r, "forged_accepted") == 0);
  CHECK(counter(r, "frames_unknown_sender") >= 20);
}

TEST_CASE("clock-skew") { run_builtin("clock-skew", {20, 5, 31, {}}); }

TEST_CASE("epoch-boundary") { run_builtin("epoch-boundary", {40, 5, 37, {}}); }

// Seeds 3 and 4 split the blocking country at the switch when the next
// epoch's witnesses wait for their TLS turns (seeds 1-6 pass as it is).
TEST_CASE("epoch-boundary-sni") {
  for (std::uint64_t seed : {3u, 4u}) run_builtin("epoch-boundary-sni", {40, 5, seed, {}});
}

TEST_CASE("dissemination") {
  // The duplicate-delivery target (<= 1.5) is the gossip core's tuning
  // target: measured and warned about here, reported by meshsim, not a
  // correctness failure. Rounds, completion and convergence are checked.
  RunResult r = run_builtin("dissemination", {64, 8, 41, 10 * 60'000 + 60'000}, "duplicate_factor_max");
  CHECK(r.dissemination.completed > 0);
  CHECK(r.dissemination.completed + r.dissemination.incomplete + 64 >= r.dissemination.records);
  CHECK(r.duplicate_factor >= 1.0);
  CHECK(r.duplicate_factor < 3.0);
}

}  // namespace
}  // namespace mesh::sim
