// The node agent driven by hand (tests/agent/fleet.h): reports, probes,
// verdicts and snapshots, over an in-memory network with virtual time.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>

#include "tests/agent/fleet.h"

namespace mesh::agent::testing {
namespace {

TEST_CASE("a fresh fleet of agents converges: every report everywhere, every server ok") {
  Fleet fleet(5, small_roster(5));
  fleet.run_for(60'000);
  fleet.answer_self_checks = false;  // no new report: what is in flight settles
  fleet.run_for(10'000);
  std::size_t total_targets = 0;
  for (std::uint32_t i = 0; i < 5; ++i) {
    CHECK(fleet.agent(i).core().record_count() == 6);  // the roster and 5 reports
    CHECK(fleet.agent(i).core().digest() == fleet.agent(0).core().digest());
    const verdict::Evaluation evaluation = fleet.agent(i).evaluate(fleet.now);
    for (const auto& server : evaluation.servers) CHECK(server.status == verdict::ServerStatus::ok);
    CHECK(fleet.agent(i).counters().reports_published >= 5);
    // Every target probed every 10 s, from a first probe within 10 s.
    const std::size_t targets = fleet.agent(i).probe_targets(fleet.now).size();
    CHECK(fleet.agent(i).counters().probes_ok >= targets * 6);
    CHECK(fleet.agent(i).counters().probes_ok <= targets * 7);
    total_targets += targets;
  }
  CHECK(total_targets == 5 * 3);  // 3 witnesses per target (witnesses_per_country)
}

TEST_CASE("a target every observer fails to reach becomes unreachable everywhere, then heals") {
  Fleet fleet(5, small_roster(5));
  fleet.run_for(30'000);
  bool blocked = true;
  fleet.probe_outcome = [&](std::uint32_t, const ProbeRequest& request) {
    return blocked && request.target == "s4" ? ProbeFailure::tcp_timeout : ProbeFailure::none;
  };
  fleet.run_for(70'000);
  for (std::uint32_t i = 0; i < 4; ++i) {
    const auto snapshot = fleet.agent(i).verdicts();
    REQUIRE(snapshot != nullptr);
    const auto& blocked_verdict = verdict_of(*snapshot, "s4");
    CHECK(blocked_verdict.status == verdict::ServerStatus::unreachable);
    CHECK(blocked_verdict.failing == 3);  // its 3 witnesses (witnesses_per_country)
    CHECK(blocked_verdict.eligible == 3);
    CHECK(verdict_of(*snapshot, "s0").status == verdict::ServerStatus::ok);
  }
  blocked = false;
  fleet.run_for(40'000);
  for (std::uint32_t i = 0; i < 5; ++i) {
    CHECK(verdict_of(*fleet.agent(i).verdicts(), "s4").status == verdict::ServerStatus::ok);
  }
}

TEST_CASE("a verdict snapshot is emitted exactly when what an operator sees changes") {
  Fleet fleet(4, small_roster(4));
  fleet.keep_log = true;
  fleet.run_for(40'000);
  auto snapshots = [&](std::uint32_t i) {
    std::size_t count = 0;
    for (const auto& effects : fleet.nodes[i].log) count += effects.verdicts != nullptr;
    return count;
  };
  const std::size_t settled = snapshots(1);
  fleet.run_for(60'000);  // steady: reports keep coming, nothing changes
  CHECK(snapshots(1) == settled);
  fleet.self_check = [](std::uint32_t node) {
    SelfCheck check;
    if (node == 3) {
      check.service_ok = false;
      check.reason = "vpn service not running";
    }
    return check;
  };
  fleet.run_for(25'000);
  CHECK(snapshots(1) == settled + 1);
  const auto& shown = verdict_of(*fleet.agent(1).verdicts(), "s3");
  CHECK(shown.status == verdict::ServerStatus::unavailable);
  CHECK(shown.self_check_reason == "vpn service not running");
  // The snapshot is stored too (meshctl reads it).
  bool stored = false;
  for (const auto& effects : fleet.nodes[1].log) {
    for (const auto& [key, value] : effects.store.put_state) stored |= key == "agent/verdicts";
  }
  CHECK(stored);
}

TEST_CASE("probes of one target are spaced by the interval within 5%, at a per-node phase") {
  Fleet fleet(3, small_roster(3));
  std::map<std::pair<std::uint32_t, std::string>, std::vector<UnixMs>> asked;
  fleet.probe_outcome = [&](std::uint32_t observer, const ProbeRequest& request) {
    asked[{observer, request.target}].push_back(fleet.now);
    return ProbeFailure::none;
  };
  fleet.run_for(200'000);
  std::set<UnixMs> first_times;
  for (const auto& [key, times] : asked) {
    REQUIRE(times.size() >= 15);
    first_times.insert(times.front());
    for (std::size_t k = 1; k < times.size(); ++k) {
      // Ticks are 1 s apart: the 10 s interval +-5% lands on 9..11 s.
      CHECK(times[k] - times[k - 1] >= 9'000);
      CHECK(times[k] - times[k - 1] <= 11'000);
    }
  }
  CHECK(first_times.size() > 1);  // not every pair in lockstep
}

TEST_CASE("an outcome for no probe in flight changes no streak and is counted") {
  Fleet fleet(3, small_roster(3));
  fleet.run_for(30'000);
  const auto before = fleet.agent(0).ledger().find("s1");
  REQUIRE(before != nullptr);
  const verdict::TargetStreak kept = *before;
  ProbeOutcome stray;
  stray.probe_id = 999'999;
  stray.target = "s1";
  stray.failure = ProbeFailure::tcp_refused;
  (void)fleet.agent(0).on_probe_outcome(stray, fleet.now);
  CHECK(*fleet.agent(0).ledger().find("s1") == kept);
  CHECK(fleet.agent(0).counters().probes_unexpected == 1);
}

TEST_CASE("the same seed and the same events give the same frames, byte for byte") {
  auto run = [] {
    Fleet fleet(4, small_roster(4), 9);
    fleet.keep_log = true;
    fleet.run_for(45'000);
    std::vector<Bytes> frames;
    for (const auto& node : fleet.nodes) {
      for (const auto& effects : node.log) {
        for (const auto& out : effects.send) frames.push_back(out.frame);
      }
    }
    return frames;
  };
  const auto first = run();
  CHECK(!first.empty());
  CHECK(first == run());
}

TEST_CASE("a wall-clock jump moves the ledger's probe times with it") {
  Fleet fleet(3, small_roster(3));
  fleet.run_for(30'000);
  const UnixMs before = fleet.agent(0).ledger().find("s1")->last_probe_ms;
  fleet.agent(0).on_clock_jump(-5'000);
  CHECK(fleet.agent(0).ledger().find("s1")->last_probe_ms == before - 5'000);
}

TEST_CASE("after a clock step back of an hour, reports and probes go on at their pace") {
  Fleet fleet(3, small_roster(3));
  fleet.run_for(30'000);
  // No probe of node 0 in flight: the test fleet answers on its own clock,
  // which steps back too, so an answer due then would come an hour late
  // (the daemon's prober answers in real time).
  auto in_flight = [&] {
    const auto& c = fleet.agent(0).counters();
    return c.probes_requested - c.probes_ok - c.probes_failed - c.probes_lost;
  };
  while (in_flight() != 0) fleet.step();
  // The fleet's clock (and node 0's) steps back one hour; node 0 is told.
  fleet.now -= 3'600'000;
  fleet.agent(0).on_clock_jump(-3'600'000);
  const auto reports = fleet.agent(0).counters().reports_published;
  const auto probes = fleet.agent(0).counters().probes_ok;
  fleet.run_for(30'000);
  CHECK(fleet.agent(0).counters().reports_published >= reports + 2);
  CHECK(fleet.agent(0).counters().probes_ok >= probes + 4);
}

}  // namespace
}  // namespace mesh::agent::testing
