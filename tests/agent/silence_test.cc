// Silence, answers and flapping at the agent (docs/VERDICTS.md, "Silence
// and answers" and "Flapping"): a living target's failure is answered
// within seconds (the witness probes again when the target speaks, the
// target refutes a witness that has not heard from it); a silent target's
// stays unanswered; a flapping node asks to be held out, and every node
// holds it out until its hold-down ends.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>

#include "node/agent/confirmation.h"
#include "node/agent/detection.h"
#include "node/agent/flap_history.h"
#include "tests/agent/fleet.h"

namespace mesh::agent::testing {
namespace {

bool in_rotation(const verdict::Evaluation& e, const ServerId& id) {
  for (const auto& route : e.routes) {
    if (std::find(route.members.begin(), route.members.end(), id) != route.members.end()) return true;
  }
  return false;
}

TEST_CASE("FlapHistory: the hold-down doubles with the changes of the last hour, up to 30 minutes") {
  constexpr DurationMs kBase = 60'000;
  FlapHistory flaps;
  UnixMs t = kStartMs;
  CHECK(flaps.at(t) == Flapping{});
  flaps.failed(t);
  flaps.recovered(t + 10'000, kBase);
  CHECK(flaps.at(t + 10'000) == Flapping{1, 0});  // one failure: back at once
  flaps.failed(t + 20'000);
  flaps.recovered(t + 30'000, kBase);
  CHECK(flaps.at(t + 30'000) == Flapping{2, kBase});
  // Said relative to the report's timestamp: 20 s later, 40 s are left.
  CHECK(flaps.at(t + 50'000) == Flapping{2, kBase - 20'000});
  CHECK(flaps.at(t + 30'000 + kBase).hold_ms == 0);
  flaps.failed(t + 40'000);
  flaps.recovered(t + 50'000, kBase);
  CHECK(flaps.at(t + 50'000) == Flapping{3, 2 * kBase});
  for (int n = 4; n <= 12; ++n) {
    flaps.failed(t + n * 10'000);
    flaps.recovered(t + n * 10'000 + 5'000, kBase);
  }
  CHECK(flaps.at(t + 125'000) == Flapping{12, kFlapHoldMaxMs});  // capped
  // An hour after the first change it leaves the count; after the last, nothing is said.
  CHECK(flaps.at(t + kFlapWindowMs + 1).changes == 11);
  CHECK(flaps.at(t + 120'000 + kFlapWindowMs + 1) == Flapping{});
}

TEST_CASE("FlapHistory: storage round trip, and strict decode") {
  FlapHistory flaps;
  flaps.failed(kStartMs);
  flaps.recovered(kStartMs + 1'000, 10'000);
  flaps.failed(kStartMs + 2'000);
  flaps.recovered(kStartMs + 3'000, 10'000);
  const Bytes encoded = flaps.encode();
  CHECK(encoded.size() == 2 + 2 * 8 + 8);
  auto decoded = FlapHistory::decode(encoded);
  REQUIRE(decoded.has_value());
  CHECK(decoded->encode() == encoded);
  CHECK(decoded->at(kStartMs + 3'000) == flaps.at(kStartMs + 3'000));
  CHECK(FlapHistory::decode(FlapHistory{}.encode()).has_value());
  Bytes longer = encoded;
  longer.push_back(0);
  CHECK_FALSE(FlapHistory::decode(longer));
  CHECK_FALSE(FlapHistory::decode(ByteView(encoded.data(), encoded.size() - 1)));
  Bytes other_format = encoded;
  other_format[0] = 2;
  CHECK_FALSE(FlapHistory::decode(other_format));
  Bytes out_of_order = encoded;  // the two change times swapped
  std::swap_ranges(out_of_order.begin() + 2, out_of_order.begin() + 10, out_of_order.begin() + 10);
  CHECK_FALSE(FlapHistory::decode(out_of_order));
  Bytes too_many(2 + (kFlapChangesKept + 1) * 8 + 8, 0);
  too_many[0] = 1;
  too_many[1] = static_cast<std::uint8_t>(kFlapChangesKept + 1);
  CHECK_FALSE(FlapHistory::decode(too_many));
}

TEST_CASE("a living target that cannot be reached: the failure is answered within seconds") {
  Fleet fleet(5, small_roster(5));
  fleet.run_for(40'000);
  const std::vector<std::uint32_t> witnesses = witnesses_of(fleet, 4);
  REQUIRE(witnesses.size() >= 2);
  fleet.probe_outcome = [](std::uint32_t, const ProbeRequest& request) {
    return request.target == "s4" ? ProbeFailure::tcp_timeout : ProbeFailure::none;
  };
  // Each witness's first failure is unanswered: s4 last spoke before it.
  // s4 then speaks (it refutes the witness's report at once, or its
  // heartbeat comes), the witness probes again at once and fails: the first
  // answer, the streak's second failure. The second answer comes with the
  // next probe, which a streak of 3 needs anyway: the failure is answered
  // by the time it could vote, within a probe interval (10 s) of the first.
  std::map<std::uint32_t, UnixMs> first_failed, answered_at, failing_at;
  for (int second = 0; second < 30; ++second) {
    fleet.step();
    for (std::uint32_t w : witnesses) {
      const verdict::TargetStreak* streak = fleet.agent(w).ledger().find("s4");
      if (streak == nullptr || streak->fail_streak == 0) continue;
      first_failed.emplace(w, fleet.now);
      if (streak->answered) answered_at.emplace(w, fleet.now);
      if (streak->fail_streak >= 3) failing_at.emplace(w, fleet.now);
    }
  }
  for (std::uint32_t w : witnesses) {
    CAPTURE(w);
    REQUIRE(first_failed.count(w) == 1);
    REQUIRE(answered_at.count(w) == 1);
    REQUIRE(failing_at.count(w) == 1);
    CHECK(answered_at[w] <= failing_at[w]);
    CHECK(answered_at[w] - first_failed[w] <= 10'000);
  }
  CHECK(fleet.agent(4).counters().refutations >= 1);
  fleet.run_for(40'000);
  const verdict::Evaluation e = fleet.agent(0).evaluate(fleet.now);
  CHECK(verdict_of(e, "s4").status == verdict::ServerStatus::unreachable);
  CHECK_FALSE(in_rotation(e, "s4"));
}

// Found with real daemons (tests/e2e scenario 2, 2 s reports, probes that
// time out after 3.5 s): a report arrives while every failing probe is out,
// and reading "the latest report arrived before the probe began" at the
// outcome never answered the streak: a country's IP block was never a
// verdict. The report held when the probe was sent is what counts.
TEST_CASE("a living target that reports faster than a probe times out: the failure is answered") {
  Roster roster = small_roster(5);
  roster.params.heartbeat_interval_ms = 2'000;
  roster.params.probe_interval_ms = 2'000;
  Fleet fleet(5, roster);
  fleet.probe_duration_ms = 4'000;
  fleet.run_for(40'000);
  const std::vector<std::uint32_t> witnesses = witnesses_of(fleet, 4);
  REQUIRE(witnesses.size() >= 2);
  fleet.probe_outcome = [](std::uint32_t, const ProbeRequest& request) {
    return request.target == "s4" ? ProbeFailure::tcp_timeout : ProbeFailure::none;
  };
  fleet.run_for(30'000);
  for (std::uint32_t w : witnesses) {
    CAPTURE(w);
    const verdict::TargetStreak* streak = fleet.agent(w).ledger().find("s4");
    REQUIRE(streak != nullptr);
    CHECK(streak->fail_streak >= 3);
    CHECK(streak->answered);
  }
  const verdict::Evaluation e = fleet.agent(0).evaluate(fleet.now);
  CHECK(verdict_of(e, "s4").status == verdict::ServerStatus::unreachable);
  CHECK_FALSE(in_rotation(e, "s4"));
}

TEST_CASE("a witness's silence claim is refuted by the target at once, once per change gap") {
  // Heartbeats a minute apart: the target's heartbeat does not answer the
  // claim for it (probes every 10 s keep to slots on the clock's grid, as
  // heartbeats do; at 10 s both, a heartbeat fell just after the claim).
  Roster roster = small_roster(5);
  roster.params.heartbeat_interval_ms = 60'000;
  roster.params.stale_after_ms = 180'000;
  Fleet fleet(5, roster);
  fleet.run_for(40'000);
  const std::uint64_t before = fleet.agent(4).counters().refutations;
  // One witness alone fails s4 (its own firewall): its reports claim it has
  // not heard from s4 since its streak began; s4 answers them.
  const std::uint32_t witness = witnesses_of(fleet, 4).front();
  fleet.probe_outcome = [witness](std::uint32_t observer, const ProbeRequest& request) {
    return observer == witness && request.target == "s4" ? ProbeFailure::tcp_timeout : ProbeFailure::none;
  };
  fleet.run_for(60'000);
  const std::uint64_t refuted = fleet.agent(4).counters().refutations - before;
  CHECK(refuted >= 1);
  // Not one per witness report: a refutation at most every 5 s (or change
  // gap, when shorter).
  const DurationMs gap = std::min(change_gap_ms(fleet.agent(4).roster()->params), kRefutationGapMs);
  CHECK(refuted <= 60'000 / gap + 1);
  // No other node refutes anything: nobody claims silence of them.
  for (std::uint32_t i = 0; i < 4; ++i) CHECK(fleet.agent(i).counters().refutations == 0);
  // One witness is never a verdict.
  CHECK(verdict_of(fleet.agent(0).evaluate(fleet.now), "s4").status == verdict::ServerStatus::ok);
}

// A powered-off server: every witness fails it and never hears from it
// again. Its silence claims hold (nothing it signed since contradicts them):
// votes, as for any down server, and its silence shows too.
TEST_CASE("a silent target's failures stay unanswered, and still vote") {
  Fleet fleet(5, small_roster(5));
  fleet.run_for(40'000);
  const std::vector<std::uint32_t> witnesses = witnesses_of(fleet, 4);
  fleet.kill(4);
  fleet.probe_outcome = [](std::uint32_t, const ProbeRequest& request) {
    return request.target == "s4" ? ProbeFailure::tcp_refused : ProbeFailure::none;
  };
  fleet.run_for(90'000);
  for (std::uint32_t w : witnesses) {
    CAPTURE(w);
    const verdict::TargetStreak* streak = fleet.agent(w).ledger().find("s4");
    REQUIRE(streak != nullptr);
    CHECK(streak->fail_streak >= 3);
    CHECK_FALSE(streak->answered);
    CHECK(streak->failing_since_ms > kStartMs);
  }
  const verdict::Evaluation evaluation = fleet.agent(0).evaluate(fleet.now);
  const verdict::ServerVerdict& shown = verdict_of(evaluation, "s4");
  CHECK(shown.status == verdict::ServerStatus::unreachable);
  CHECK(shown.flags.no_data);
  CHECK(shown.failing >= 2);
}

TEST_CASE("a flapping node is held out by every node until its hold-down ends") {
  Fleet fleet(5, small_roster(5));
  fleet.run_for(40'000);
  // s3's service fails for 10 s every 20 s, four times.
  bool failing = false;
  fleet.self_check = [&](std::uint32_t node) {
    SelfCheck check;
    if (node == 3 && failing) {
      check.service_ok = false;
      check.reason = "vpn service not running";
    }
    return check;
  };
  for (int flap = 0; flap < 4; ++flap) {
    failing = true;
    fleet.run_for(10'000);
    failing = false;
    fleet.run_for(10'000);
  }
  fleet.run_for(15'000);  // its healthy report reaches everyone
  for (std::uint32_t i = 0; i < 5; ++i) {
    CAPTURE(i);
    const verdict::Evaluation e = fleet.agent(i).evaluate(fleet.now);
    const verdict::ServerVerdict& shown = verdict_of(e, "s3");
    CHECK(shown.status == verdict::ServerStatus::ok);
    CHECK(shown.flags.held_out);
    CHECK(shown.flap_changes >= 3);
    CHECK(shown.caption == verdict::held_out_caption(shown.flap_changes));
    CHECK_FALSE(in_rotation(e, "s3"));
  }
  // The hold-down is 10 s x 2^(n-2), 40 s at four changes, from the recovery.
  fleet.run_for(60'000);
  for (std::uint32_t i = 0; i < 5; ++i) {
    CAPTURE(i);
    const verdict::Evaluation e = fleet.agent(i).evaluate(fleet.now);
    CHECK_FALSE(verdict_of(e, "s3").flags.held_out);
    CHECK(in_rotation(e, "s3"));
  }
}

TEST_CASE("a node that fails once is not held out when it recovers") {
  Fleet fleet(4, small_roster(4));
  fleet.run_for(40'000);
  bool failing = true;
  fleet.self_check = [&](std::uint32_t node) {
    SelfCheck check;
    check.service_ok = !(node == 2 && failing);
    return check;
  };
  fleet.run_for(20'000);
  CHECK_FALSE(in_rotation(fleet.agent(0).evaluate(fleet.now), "s2"));
  failing = false;
  fleet.run_for(15'000);
  const verdict::Evaluation e = fleet.agent(0).evaluate(fleet.now);
  CHECK_FALSE(verdict_of(e, "s2").flags.held_out);
  CHECK(verdict_of(e, "s2").flap_changes == 1);
  CHECK(in_rotation(e, "s2"));
}

}  // namespace
}  // namespace mesh::agent::testing
