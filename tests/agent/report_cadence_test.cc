// When a node reports (docs/PROTOCOL.md, "When a node reports"): a report
// at once when its meaning changes, a heartbeat otherwise; and which probes
// are TLS handshakes (docs/PROTOCOL.md, "Probes").
#include <doctest/doctest.h>

#include <algorithm>
#include <optional>
#include <vector>

#include "node/agent/warm_up.h"
#include "tests/agent/fleet.h"

namespace mesh::agent::testing {
namespace {

// Probes every 10 s, heartbeats every 5 minutes, stale after 12.
Roster cadence_roster(std::uint32_t count) {
  Roster roster = small_roster(count);
  roster.params.heartbeat_interval_ms = 300'000;
  roster.params.stale_after_ms = 720'000;
  return roster;
}

// Node 0's report as node 1 holds it, or nullopt.
std::optional<Report> held_report(Fleet& fleet, std::uint32_t origin = 0, std::uint32_t at = 1) {
  auto held = fleet.agent(at).core().report_of(origin);
  if (!held || held->report == nullptr) return std::nullopt;
  return *held->report;
}

std::optional<ProbeResult> result_for(const Report& report, std::uint32_t target) {
  for (const ProbeResult& result : report.view.results) {
    if (result.target == target) return result;
  }
  return std::nullopt;
}

TEST_CASE("a healthy node publishes a heartbeat per heartbeat_interval_ms, not a report per self-check") {
  Fleet fleet(4, cadence_roster(4));
  fleet.run_for(60'000);  // the first report of each node
  const AgentCounters before = fleet.agent(0).counters();
  fleet.run_for(3'000'000);  // 50 minutes
  const AgentCounters& after = fleet.agent(0).counters();
  // A self-check every probe interval (10 s), a report every 5 minutes.
  CHECK(after.self_checks_requested - before.self_checks_requested >= 290);
  const auto reports = after.reports_published - before.reports_published;
  CHECK(reports >= 9);
  CHECK(reports <= 11);
  // And the fleet still holds every report, fresh.
  for (std::uint32_t origin = 0; origin < 4; ++origin) CHECK(held_report(fleet, origin).has_value());
}

// Heartbeats fall on a fleet-wide grid (the multiples of the interval in
// Unix time, shifted by the fleet's offset from the operator's key and by
// each node's phase of under 10 s), so a fleet's heartbeats travel together
// however its nodes were started; and a node never goes longer than one
// interval without a report.
TEST_CASE("heartbeats fall on a fleet-wide grid, at most one interval apart, however nodes were started") {
  Fleet fleet(4, cadence_roster(4));
  fleet.kill(3);
  fleet.run_for(137'000);
  fleet.start(3);  // 137 s after the others
  fleet.run_for(700'000);  // its return is news to the others: past it
  std::vector<std::vector<UnixMs>> published(4);
  std::vector<std::uint64_t> count(4);
  for (std::uint32_t i = 0; i < 4; ++i) count[i] = fleet.agent(i).counters().reports_published;
  for (int second = 0; second < 1'800; ++second) {
    fleet.step();
    for (std::uint32_t i = 0; i < 4; ++i) {
      const std::uint64_t now_count = fleet.agent(i).counters().reports_published;
      if (now_count != count[i]) published[i].push_back(fleet.now);
      count[i] = now_count;
    }
  }
  constexpr DurationMs kInterval = 300'000;
  std::uint64_t key_head = 0;
  for (std::size_t i = 0; i < 8; ++i) key_head = (key_head << 8) | operator_key().public_key[i];
  const DurationMs offset = static_cast<DurationMs>(key_head % kInterval);
  CAPTURE(offset);
  for (std::uint32_t i = 0; i < 4; ++i) {
    CAPTURE(i);
    REQUIRE(published[i].size() >= 5);
    for (std::size_t k = 0; k < published[i].size(); ++k) {
      // The phase, and the tick that ran it.
      CHECK((published[i][k] - offset + kInterval) % kInterval < 10'000 + 2'000);
      if (k > 0) CHECK(published[i][k] - published[i][k - 1] <= kInterval + 2'000);
    }
  }
}

// Above 128 servers the heartbeat grows with the roster's size
// (docs/CONFIG.md, "Fleet size"): at 256 servers a quiet node reports every
// 20 s instead of 10. Four agents run; the roster's other servers only
// answer probes. (Freshness at that size: tests/verdict/rules_test.cc.)
TEST_CASE("above 128 servers the heartbeat scales with the roster's size") {
  auto quiet_reports = [](std::uint32_t servers) {
    Fleet fleet(4, small_roster(servers));
    fleet.run_for(60'000);
    const std::uint64_t before = fleet.agent(0).counters().reports_published;
    fleet.run_for(600'000);
    return fleet.agent(0).counters().reports_published - before;
  };
  const std::uint64_t at_128 = quiet_reports(128);
  const std::uint64_t at_256 = quiet_reports(256);
  CAPTURE(at_128);
  CAPTURE(at_256);
  CHECK(at_128 >= 58);  // every 10 s
  CHECK(at_128 <= 62);
  CHECK(at_256 >= 29);  // every 20 s
  CHECK(at_256 <= 31);
}

// A clock that was ahead signed records the fleet refused as future; once
// it is stepped back the node must be heard again at once, not at its next
// heartbeat minutes later.
// A node that starts may judge from reports it has not caught up with
// yet (node/agent/warm_up.h): its reports say it is warming until it has
// heard, since its start, every member whose report is not stale, and at
// the latest a heartbeat interval and a margin on; the end is published at
// once, not at the next heartbeat.
TEST_CASE("a fleet started at once is warm within seconds of its last first report") {
  Fleet fleet(4, cadence_roster(4));
  CHECK(fleet.agent(0).warming(fleet.now));  // a first start holds nothing: every member no_data
  fleet.run_for(30'000);
  for (std::uint32_t i = 0; i < 4; ++i) CHECK_FALSE(fleet.agent(i).warming(fleet.now));
  REQUIRE(held_report(fleet).has_value());
  CHECK_FALSE(held_report(fleet)->warming);
}

TEST_CASE("a restarted node is warming until it has heard every reporting member since its start") {
  Fleet fleet(4, cadence_roster(4));
  fleet.run_for(90'000);
  fleet.kill(0);
  fleet.run_for(30'000);
  fleet.start(0);  // from its store: the others' reports it holds are old
  const UnixMs restarted = fleet.now;
  fleet.run_for(10'000);
  CHECK(fleet.agent(0).warming(fleet.now));
  REQUIRE(held_report(fleet).has_value());
  CHECK(held_report(fleet)->warming);
  const Roster& roster = *fleet.agent(0).roster();
  const DurationMs warm_up = warm_up_ms(roster.params, roster.servers.size());
  CHECK(warm_up == 320'000);
  while (fleet.agent(0).warming(fleet.now) && fleet.now - restarted < warm_up + 5'000) fleet.step();
  CHECK(fleet.now - restarted < warm_up);  // the others' heartbeats, not the cap
  for (std::uint32_t origin = 1; origin < 4; ++origin) {
    CHECK(fleet.agent(0).core().report_of(origin)->envelope->timestamp_ms >= restarted);
  }
  const auto published = fleet.agent(0).counters().reports_published;
  fleet.run_for(5'000);  // the change gap is 2.5 s; its next heartbeat is minutes away
  CHECK(fleet.agent(0).counters().reports_published == published + 1);
  CHECK_FALSE(held_report(fleet)->warming);
}

TEST_CASE("a node away longer than stale_after_ms warms up too: it holds nothing at its start") {
  Fleet fleet(4, cadence_roster(4));
  fleet.run_for(90'000);
  fleet.kill(0);
  fleet.run_for(900'000);  // 15 minutes: stale after 12
  fleet.start(0);  // its store keeps no report that old: it holds nothing
  const UnixMs restarted = fleet.now;
  CHECK(fleet.agent(0).warming(fleet.now));
  while (fleet.agent(0).warming(fleet.now) && fleet.now - restarted < 400'000) fleet.step();
  // Warm once SYNC brought it every member's current report: the others'
  // copies, byte for byte.
  CHECK(fleet.now - restarted < 30'000);
  for (std::uint32_t origin = 1; origin < 4; ++origin) {
    const std::uint32_t reference = origin == 1 ? 2 : 1;
    REQUIRE(fleet.agent(0).core().report_of(origin).has_value());
    CHECK(fleet.agent(0).core().report_of(origin)->envelope->raw ==
          fleet.agent(reference).core().report_of(origin)->envelope->raw);
  }
}

TEST_CASE("a member that is down holds a restarted node's warm-up to its cap") {
  Fleet fleet(4, cadence_roster(4));
  fleet.run_for(90'000);
  fleet.kill(3);  // for good
  fleet.kill(0);
  fleet.run_for(30'000);
  fleet.start(0);
  const UnixMs restarted = fleet.now;
  const Roster& roster = *fleet.agent(0).roster();
  const DurationMs warm_up = warm_up_ms(roster.params, roster.servers.size());
  fleet.run_for(warm_up - 2'000);
  CHECK(fleet.agent(0).warming(fleet.now));
  CHECK(held_report(fleet)->warming);
  const auto published = fleet.agent(0).counters().reports_published;
  fleet.run_for(restarted + warm_up + 5'000 - fleet.now);
  CHECK_FALSE(fleet.agent(0).warming(fleet.now));
  CHECK(fleet.agent(0).counters().reports_published == published + 1);
  CHECK_FALSE(held_report(fleet)->warming);
}

// A warm fleet of 3 (cadence_roster), 10 s after node 0's heartbeat: its
// next report is minutes away unless something changes.
Fleet quiet_fleet() {
  Fleet fleet(3, cadence_roster(3));
  fleet.run_for(400'000);  // warm, past the first reports' changes
  const auto reports = fleet.agent(0).counters().reports_published;
  while (fleet.agent(0).counters().reports_published == reports) fleet.step();
  fleet.run_for(10'000);
  return fleet;
}

// The alert sender says so in its reports (docs/PANELS.md, "Takeover"): the
// others drop the transitions it dealt with on that word only, so taking
// and leaving the role are news, not left for the next heartbeat.
TEST_CASE("taking and leaving the alert sender's role publishes a report at once") {
  Fleet fleet = quiet_fleet();
  CHECK_FALSE(held_report(fleet)->alert_sender);
  const auto reports = fleet.agent(0).counters().reports_published;
  fleet.agent(0).set_alert_sender(true);
  fleet.agent(0).set_alert_sender(true);  // no change: no second report
  fleet.run_for(20'000);
  CHECK(fleet.agent(0).counters().reports_published == reports + 1);
  CHECK(held_report(fleet)->alert_sender);
  fleet.run_for(100'000);  // within the heartbeat: nothing new to say
  CHECK(fleet.agent(0).counters().reports_published == reports + 1);
  fleet.agent(0).set_alert_sender(false);
  fleet.run_for(20'000);
  CHECK(fleet.agent(0).counters().reports_published == reports + 2);
  CHECK_FALSE(held_report(fleet)->alert_sender);
}

TEST_CASE("a clock step publishes a heartbeat at once") {
  Fleet fleet = quiet_fleet();
  const auto quiet = fleet.agent(0).counters().reports_published;
  fleet.agent(0).on_clock_jump(-5'000);
  fleet.run_for(3'000);
  CHECK(fleet.agent(0).counters().reports_published == quiet + 1);
  fleet.run_for(200'000);  // then the grid again: nothing more for minutes
  CHECK(fleet.agent(0).counters().reports_published == quiet + 1);
}

TEST_CASE("a target's failure is published at once: on its way at the first, failing at fail_streak") {
  Fleet fleet(4, cadence_roster(4));
  fleet.run_for(120'000);
  bool blocked = false;
  fleet.probe_outcome = [&](std::uint32_t observer, const ProbeRequest& request) {
    return blocked && observer == 0 && request.target == "s1" ? ProbeFailure::tcp_timeout
                                                              : ProbeFailure::none;
  };
  const auto reports = fleet.agent(0).counters().reports_published;
  blocked = true;
  const UnixMs block_ms = fleet.now;
  std::optional<DurationMs> on_its_way_ms, failing_ms;
  while (fleet.now - block_ms < 120'000 && !failing_ms) {
    fleet.step();
    auto report = held_report(fleet);
    auto result = report ? result_for(*report, 1) : std::nullopt;
    if (result && result->fail_streak >= 1 && !on_its_way_ms) on_its_way_ms = fleet.now - block_ms;
    if (result && result->fail_streak >= 3) failing_ms = fleet.now - block_ms;
  }
  // The first failure within a probe interval (and the change gap), the
  // vote within fail_streak intervals: far sooner than the heartbeat.
  REQUIRE(on_its_way_ms.has_value());
  REQUIRE(failing_ms.has_value());
  CHECK(*on_its_way_ms <= 10'000 + 2'000);
  CHECK(*failing_ms <= 3 * 10'500 + 2'000);
  // One report per class change (on its way, failing), no more.
  CHECK(fleet.agent(0).counters().reports_published - reports == 2);
  // Recovery is news too.
  blocked = false;
  const UnixMs lift_ms = fleet.now;
  std::optional<DurationMs> recovered_ms;
  while (fleet.now - lift_ms < 60'000 && !recovered_ms) {
    fleet.step();
    auto result = result_for(*held_report(fleet), 1);
    if (result && result->fail_streak == 0) recovered_ms = fleet.now - lift_ms;
  }
  REQUIRE(recovered_ms.has_value());
  CHECK(*recovered_ms <= 10'500 + 2'000 + 2'500);  // a probe interval, then the change gap
  // The recovery travels flagged (docs/VERDICTS.md rule 6) for fail_streak
  // probes, and the flag's end is news as well: published, not left to the
  // heartbeat.
  CHECK(result_for(*held_report(fleet), 1)->recovered);
  const auto recovered_reports = fleet.agent(0).counters().reports_published;
  std::optional<DurationMs> unflagged_ms;
  while (fleet.now - lift_ms < 120'000 && !unflagged_ms) {
    fleet.step();
    if (!result_for(*held_report(fleet), 1)->recovered) unflagged_ms = fleet.now - lift_ms;
  }
  REQUIRE(unflagged_ms.has_value());
  CHECK(*unflagged_ms >= 3 * 9'500);   // the 4th ok probe ends it, not sooner
  CHECK(*unflagged_ms <= 4 * 10'500 + 2'000 + 2'500);
  CHECK(fleet.agent(0).counters().reports_published - recovered_reports == 1);
}

// The change gap spaces reports of changes; a heartbeat just before a
// change must not hold it back (it would add up to the gap to the time to
// verdict). Blocks begin right after heartbeats, ten times: the report of
// the first failure leaves in the same step as the probe outcome.
TEST_CASE("a heartbeat does not hold a change back") {
  // Probes keep to their slots on the clock's grid, and so do heartbeats:
  // a heartbeat interval that is no multiple of the probe interval walks
  // the heartbeats across the probe slots, so that some fall just before
  // a probe's failure.
  Roster roster = cadence_roster(3);
  roster.params.heartbeat_interval_ms = 293'000;
  Fleet fleet(3, roster);
  bool blocked = false;
  fleet.probe_outcome = [&](std::uint32_t observer, const ProbeRequest&) {
    return blocked && observer == 0 ? ProbeFailure::tcp_timeout : ProbeFailure::none;
  };
  fleet.run_for(400'000);
  const auto failing = [&] {
    for (const char* target : {"s1", "s2"}) {
      const auto* streak = fleet.agent(0).ledger().find(target);
      if (streak != nullptr && streak->fail_streak > 0) return true;
    }
    return false;
  };
  int held_back = 0, within_gap = 0;
  for (int cycle = 0; cycle < 10; ++cycle) {
    blocked = false;
    fleet.run_for(120'000);  // recovered, and the recovery flags ended
    const auto quiet = fleet.agent(0).counters().reports_published;
    while (fleet.agent(0).counters().reports_published == quiet) fleet.step();  // a heartbeat
    const UnixMs heartbeat_ms = fleet.now;
    blocked = true;
    while (!failing()) fleet.step();
    const auto reports = fleet.agent(0).counters().reports_published;
    if (fleet.now - heartbeat_ms < 2'500) ++within_gap;  // the change gap: probe_interval / 4
    if (reports == quiet + 1) ++held_back;  // only the heartbeat so far
  }
  CHECK(within_gap > 0);  // the case this test is about happened
  CHECK(held_back == 0);
}

TEST_CASE("a streak that only grows, or a success after a success, publishes nothing") {
  Fleet fleet(4, cadence_roster(4));
  fleet.run_for(120'000);
  fleet.probe_outcome = [&](std::uint32_t observer, const ProbeRequest& request) {
    return observer == 0 && request.target == "s1" ? ProbeFailure::tcp_refused : ProbeFailure::none;
  };
  fleet.run_for(60'000);  // on its way, then failing: two reports
  const auto reports = fleet.agent(0).counters().reports_published;
  const auto self_checks = fleet.agent(0).counters().self_checks_requested;
  fleet.run_for(200'000);  // the streak grows from ~6 to ~26: no news
  CHECK(fleet.agent(0).counters().reports_published - reports <= 1);  // a heartbeat, at most
  CHECK(fleet.agent(0).counters().self_checks_requested - self_checks >= 19);
}

TEST_CASE("a self-check that flips is published at once, not at the heartbeat") {
  Fleet fleet(4, cadence_roster(4));
  fleet.run_for(120'000);
  bool service_down = false;
  fleet.self_check = [&](std::uint32_t node) {
    SelfCheck check;
    if (node == 0 && service_down) {
      check.service_ok = false;
      check.reason = "service stopped";
    }
    return check;
  };
  service_down = true;
  const UnixMs down_ms = fleet.now;
  std::optional<DurationMs> seen_ms;
  while (fleet.now - down_ms < 60'000 && !seen_ms) {
    fleet.step();
    auto report = held_report(fleet);
    if (report && !report->self_check.service_ok) seen_ms = fleet.now - down_ms;
  }
  REQUIRE(seen_ms.has_value());
  CHECK(*seen_ms <= 10'500 + 2'000);  // the next self-check, then one hop
}

TEST_CASE("many targets turning at once publish at most two reports per change gap") {
  Roster roster = cadence_roster(12);
  Fleet fleet(12, roster);
  fleet.run_for(120'000);
  std::vector<UnixMs> published;
  fleet.keep_log = true;
  fleet.nodes[0].log.clear();
  fleet.probe_outcome = [&](std::uint32_t observer, const ProbeRequest&) {
    return observer == 0 ? ProbeFailure::tcp_timeout : ProbeFailure::none;
  };
  for (int s = 0; s < 60; ++s) {
    fleet.step();
    for (const AgentEffects& effects : fleet.nodes[0].log) {
      if (effects.published) published.push_back(fleet.now);
    }
    fleet.nodes[0].log.clear();
  }
  // 11 targets at random phases cross two class boundaries each within a
  // minute: 22 changes, reports of changes at least probe_interval / 4 =
  // 2.5 s apart, and inside each gap at most one more for a target's first
  // failure (node/agent/confirmation.h): never three within a gap.
  REQUIRE(published.size() >= 3);
  for (std::size_t k = 2; k < published.size(); ++k) CHECK(published[k] - published[k - 2] >= 2'500);
  CHECK(published.size() <= 2 * (60'000 / 2'500 + 1));
}

TEST_CASE("a failed TLS stage makes the next probes TLS until one gets through; a TCP recovery is checked with TLS") {
  Fleet fleet(3, small_roster(3));
  // Node 0 takes a TLS turn every 10 intervals (tls_every 5, 2 witnesses),
  // so that its turns are few beside the probes the rules make TLS.
  fleet.kill(0);
  fleet.start(0, [](AgentConfig& config) { config.tls_every = 5; });
  std::vector<bool> tls;              // node 0's probes of s1: TLS or not
  std::vector<ProbeFailure> outcome;  // and what they found
  bool sni_blocked = false, ip_blocked = false;
  fleet.probe_outcome = [&](std::uint32_t observer, const ProbeRequest& request) {
    ProbeFailure failure = ProbeFailure::none;
    if (observer == 0 && request.target == "s1") {
      if (ip_blocked) failure = ProbeFailure::tcp_timeout;
      else if (sni_blocked && request.tls) failure = ProbeFailure::tls_reset;
      tls.push_back(request.tls);
      outcome.push_back(failure);
    }
    return failure;
  };
  fleet.run_for(105'000);  // ~10 probes of s1, every 10th TLS
  sni_blocked = true;
  fleet.run_for(250'000);
  // From the first TLS probe after the block on, every probe is TLS and
  // fails: the streak grows at the probe interval.
  std::size_t first = 0;
  while (first < outcome.size() && outcome[first] != ProbeFailure::tls_reset) ++first;
  REQUIRE(first < outcome.size());
  for (std::size_t k = first; k < tls.size(); ++k) {
    CHECK(tls[k]);
    CHECK(outcome[k] == ProbeFailure::tls_reset);
  }
  CHECK(fleet.agent(0).ledger().find("s1")->fail_streak >= 3);
  // The SNI block lifts: the next TLS probe gets through, the next but one
  // is TLS too (the first success after a failure), then back to TCP.
  sni_blocked = false;
  std::size_t lifted = tls.size();
  fleet.run_for(60'000);
  REQUIRE(tls.size() >= lifted + 5);
  CHECK(tls[lifted]);
  CHECK(outcome[lifted] == ProbeFailure::none);
  CHECK(std::count(tls.begin() + lifted + 2, tls.end(), true) <= 1);
  // An IP block and its end: the first probe after TCP comes back is TLS.
  ip_blocked = true;
  fleet.run_for(50'000);
  ip_blocked = false;
  std::size_t back = tls.size();
  fleet.run_for(30'000);
  REQUIRE(tls.size() >= back + 2);
  CHECK(outcome[back] == ProbeFailure::none);
  CHECK(tls[back + 1]);
}

}  // namespace
}  // namespace mesh::agent::testing
