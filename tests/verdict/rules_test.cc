// Table-driven tests of every verdict rule and its edges (docs/VERDICTS.md,
// "Rules"): fleets of 1 to 4, quorum boundaries, streak and staleness
// boundaries, unreliable observers, missing witnesses, precedence.
#include <doctest/doctest.h>

#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "tests/verdict/fixtures.h"
#include "verdict/engine.h"

using namespace mesh;
using namespace mesh::verdict;
using namespace mesh::verdict::testing;

namespace {

constexpr UnixMs kNow = kT0 + 600'000;
constexpr UnixMs kReportAt = kNow - 30'000;
using StreakOf = std::function<std::uint32_t(std::uint32_t observer, std::uint32_t target)>;

// Full-mesh reports: every server in `reporters` probes every other.
std::vector<ObservedReport> mesh_reports(const Roster& roster, const StreakOf& streak,
                                         std::vector<std::uint32_t> reporters = {}) {
  auto n = static_cast<std::uint32_t>(roster.servers.size());
  if (reporters.empty()) {
    for (std::uint32_t o = 0; o < n; ++o) reporters.push_back(o);
  }
  std::vector<std::uint32_t> all;
  for (std::uint32_t t = 0; t < n; ++t) all.push_back(t);
  std::vector<ObservedReport> reports;
  for (std::uint32_t o : reporters) {
    reports.push_back(report_probing(o, kReportAt, roster.version, all,
                                     [&](std::uint32_t t) { return streak(o, t); }));
  }
  return reports;
}

// Streak function: observers in `failing` see target `target` failing with
// streak `streak`; every other probe succeeds.
StreakOf failing_to(std::uint32_t target, std::vector<std::uint32_t> failing,
                    std::uint32_t streak = 3) {
  return [=](std::uint32_t o, std::uint32_t t) -> std::uint32_t {
    if (t != target) return 0;
    for (std::uint32_t f : failing) {
      if (f == o) return streak;
    }
    return 0;
  };
}

const ServerVerdict& server(const Evaluation& evaluation, const std::string& id) {
  for (const ServerVerdict& verdict : evaluation.servers) {
    if (verdict.id == id) return verdict;
  }
  FAIL("no verdict for " << id);
  return evaluation.servers.front();
}

}  // namespace

TEST_CASE("fleet of 1: silence, health, self-check") {
  Roster roster = make_roster({"DE"}, {1});
  Evaluation silent = evaluate(roster, {}, kNow);
  CHECK(silent.servers[0].status == ServerStatus::no_data);
  CHECK(silent.servers[0].caption == "No data from server");
  CHECK(silent.servers[0].badges == std::vector<std::string>{std::string(kBadgeAgentSilent)});
  CHECK(silent.servers[0].last_report_ms == 0);
  CHECK(silent.routes[0].members == std::vector<std::string>{"de-1"});  // silence keeps it
  CHECK_FALSE(silent.routes[0].degraded);

  std::vector<ObservedReport> healthy = {report(0, kReportAt, roster.version)};
  Evaluation ok = evaluate(roster, healthy, kNow);
  CHECK(ok.servers[0].status == ServerStatus::ok);
  CHECK(ok.servers[0].caption.empty());
  CHECK(ok.servers[0].badges.empty());
  CHECK(ok.servers[0].quorum == 2);

  healthy[0].report.self_check = SelfCheck{false, true, "listener :443 refused"};
  Evaluation down = evaluate(roster, healthy, kNow);
  CHECK(down.servers[0].status == ServerStatus::unavailable);
  CHECK(down.servers[0].caption == "Server unavailable");
  CHECK(down.servers[0].self_check_reason == "listener :443 refused");
  CHECK(down.routes[0].degraded);
  CHECK(down.routes[0].members == std::vector<std::string>{"de-1"});
}

TEST_CASE("fleet of 2: one server's opinion is never a verdict") {
  Roster roster = make_roster({"DE", "RU"}, {1, 1});
  auto reports = mesh_reports(roster, [](std::uint32_t, std::uint32_t) { return 50u; });
  Evaluation evaluation = evaluate(roster, reports, kNow);
  for (const ServerVerdict& verdict : evaluation.servers) {
    CHECK(verdict.status == ServerStatus::ok);
    CHECK(verdict.failing == 1);
    CHECK(verdict.eligible == 1);
    CHECK(verdict.quorum == 2);
  }
}

TEST_CASE("fleets of 3 and 4: quorum is min(3, M), never below 2") {
  struct Row {
    std::uint32_t servers;
    std::vector<std::uint32_t> failing_observers;
    ServerStatus expected;
    std::uint32_t quorum;
  };
  std::vector<Row> table = {
      {3, {}, ServerStatus::ok, 2},
      {3, {1}, ServerStatus::ok, 2},
      {3, {1, 2}, ServerStatus::unreachable, 2},
      {4, {1, 2}, ServerStatus::ok, 3},
      {4, {1, 2, 3}, ServerStatus::unreachable, 3},
  };
  for (const Row& row : table) {
    CAPTURE(row.servers);
    CAPTURE(row.failing_observers.size());
    Roster roster = make_roster({"DE"}, {row.servers});
    Evaluation evaluation = evaluate(roster, mesh_reports(roster, failing_to(0, row.failing_observers)), kNow);
    const ServerVerdict& verdict = evaluation.servers[0];
    CHECK(verdict.status == row.expected);
    CHECK(verdict.quorum == row.quorum);
    CHECK(verdict.eligible == row.servers - 1);
    CHECK(verdict.failing == row.failing_observers.size());
  }
}

TEST_CASE("exact quorum boundaries with quorum_witnesses 1, 3 and 5") {
  struct Row {
    std::uint32_t quorum_witnesses;
    std::uint32_t failing;
    bool unreachable;
  };
  std::vector<Row> table = {{3, 2, false}, {3, 3, true}, {5, 4, false},
                            {5, 5, true},  {1, 1, false}, {1, 2, true}};
  for (const Row& row : table) {
    CAPTURE(row.quorum_witnesses);
    CAPTURE(row.failing);
    // One server per country: no country can disagree with itself, so the
    // count alone decides.
    Roster roster = make_roster({"AT", "BE", "CH", "DE", "ES", "FR", "GB", "HU"},
                                {1, 1, 1, 1, 1, 1, 1, 1});
    roster.params.quorum_witnesses = row.quorum_witnesses;
    std::vector<std::uint32_t> failing;
    for (std::uint32_t o = 1; o <= row.failing; ++o) failing.push_back(o);
    Evaluation evaluation = evaluate(roster, mesh_reports(roster, failing_to(0, failing)), kNow);
    const ServerVerdict& verdict = evaluation.servers[0];
    CHECK(verdict.flags.unreachable == row.unreachable);
    CHECK_FALSE(verdict.flags.insufficient_evidence);
    CHECK(verdict.quorum == std::max(2u, std::min(row.quorum_witnesses, 7u)));
    if (row.unreachable) {
      CHECK(verdict.caption == "Unreachable from your servers (" + std::to_string(row.failing) +
                                   " of 7 servers can't see it)");
    }
  }
}

TEST_CASE("a country whose witnesses disagree makes no verdict, however many fail") {
  // DE 4, US 4; target de-1. Its DE witnesses all fail; of the US ones,
  // `us_failing` fail and the rest get through.
  for (std::uint32_t us_failing : {0u, 1u, 3u, 4u}) {
    CAPTURE(us_failing);
    Roster roster = make_roster({"DE", "US"}, {4, 4});
    std::vector<std::uint32_t> failing = {1, 2, 3};
    for (std::uint32_t o = 4; o < 4 + us_failing; ++o) failing.push_back(o);
    const ServerVerdict verdict =
        evaluate(roster, mesh_reports(roster, failing_to(0, failing)), kNow).servers[0];
    const bool split = us_failing != 0 && us_failing != 4;
    CHECK(verdict.failing == 3 + us_failing);
    CHECK(verdict.flags.unreachable == !split);
    CHECK(verdict.flags.insufficient_evidence == split);
    CHECK(verdict.status == (split ? ServerStatus::ok : ServerStatus::unreachable));
    if (split) {
      CHECK(verdict.caption == "Not enough evidence (" + std::to_string(3 + us_failing) +
                                   " of 7 servers can't see it)");
    }
  }
}

TEST_CASE("a vote needs a failure streak of at least fail_streak") {
  Roster roster = make_roster({"DE"}, {5});
  for (std::uint32_t streak : {1u, 2u, 3u, 4u}) {
    CAPTURE(streak);
    // A streak below fail_streak is on its way: neither a vote nor a success.
    Evaluation evaluation =
        evaluate(roster, mesh_reports(roster, failing_to(0, {1, 2, 3, 4}, streak)), kNow);
    CHECK(evaluation.servers[0].flags.unreachable == (streak >= 3));
    CHECK_FALSE(evaluation.servers[0].flags.insufficient_evidence);
  }
  // Two witnesses still on their way do not hold up the two that fail.
  Evaluation evaluation = evaluate(
      roster,
      mesh_reports(roster, [](std::uint32_t o, std::uint32_t t) -> std::uint32_t {
        return t != 0 ? 0 : (o <= 2 ? 3 : 1);
      }),
      kNow);
  CHECK(evaluation.servers[0].failing == 2);
  CHECK(evaluation.servers[0].quorum == 3);
  CHECK(evaluation.servers[0].flags.insufficient_evidence == false);
  CHECK_FALSE(evaluation.servers[0].flags.unreachable);
}

TEST_CASE("stale versus fresh at the boundary") {
  Roster roster = make_roster({"DE"}, {4});
  const DurationMs stale = roster.params.stale_after_ms;
  auto reports = mesh_reports(roster, failing_to(0, {1, 2, 3}));
  SUBCASE("age == stale_after is fresh") {
    Evaluation evaluation = evaluate(roster, reports, kReportAt + stale);
    CHECK(evaluation.servers[0].status == ServerStatus::unreachable);
    CHECK(evaluation.servers[1].status == ServerStatus::ok);
  }
  SUBCASE("one millisecond later everything is stale") {
    Evaluation evaluation = evaluate(roster, reports, kReportAt + stale + 1);
    CHECK(evaluation.servers[0].status == ServerStatus::no_data);
    CHECK(evaluation.servers[0].eligible == 0);
    CHECK(evaluation.servers[0].missing == 3);
    CHECK(evaluation.servers[1].badges ==
          std::vector<std::string>{std::string(kBadgeStale), std::string(kBadgeAgentSilent)});
    CHECK(evaluation.servers[1].last_report_ms == kReportAt);
  }
}

TEST_CASE("unreliable observers: min targets and fraction boundaries") {
  struct Row {
    std::uint32_t servers;  // the observer probes servers - 1 targets
    std::uint32_t failing_targets;
    bool unreliable;
  };
  // fraction 500 permille, min 4 targets.
  std::vector<Row> table = {{4, 3, false}, {5, 4, true}, {5, 2, true}, {5, 1, false},
                            {8, 3, false}, {8, 4, true}};
  for (const Row& row : table) {
    CAPTURE(row.servers);
    CAPTURE(row.failing_targets);
    Roster roster = make_roster({"DE"}, {row.servers});
    auto streak = [&](std::uint32_t o, std::uint32_t t) -> std::uint32_t {
      return (o == 0 && t >= 1 && t <= row.failing_targets) ? 4 : 0;
    };
    Evaluation evaluation = evaluate(roster, mesh_reports(roster, streak), kNow);
    CHECK((evaluation.unreliable_observers == std::vector<std::string>{"de-1"}) == row.unreliable);
    CHECK(evaluation.servers[1].discarded == (row.unreliable ? 1u : 0u));
    CHECK(evaluation.servers[1].failing == (row.unreliable ? 0u : 1u));
  }
}

TEST_CASE("nobody reaches anybody: every server is down, routes serve the best available") {
  Roster roster = make_roster({"DE", "RU"}, {3, 2});
  auto reports = mesh_reports(roster, [](std::uint32_t, std::uint32_t) { return 9u; });
  Evaluation evaluation = evaluate(roster, reports, kNow);
  // Each server is failed by every witness: down, which is no observer's
  // own fault, so nobody is unreliable and every server is unreachable.
  CHECK(evaluation.unreliable_observers.empty());
  CHECK_FALSE(evaluation.partitioned);
  for (const ServerVerdict& verdict : evaluation.servers) {
    CAPTURE(verdict.id);
    CHECK(verdict.status == ServerStatus::unreachable);
    CHECK(verdict.failing == verdict.eligible);
    CHECK(verdict.discarded == 0);
  }
  for (const RouteMembership& route : evaluation.routes) {
    CHECK(route.degraded);
    CHECK_FALSE(route.members.empty());
  }
}

TEST_CASE("T is itself an unreliable observer; unreliable votes never make a quorum") {
  Roster roster = make_roster({"DE"}, {8});
  // de-1 and de-2 cannot reach anyone (their own network is broken);
  // de-3 alone fails to reach de-6.
  auto streak = [](std::uint32_t o, std::uint32_t t) -> std::uint32_t {
    if (o <= 1) return 5;
    return (o == 2 && t == 5) ? 5 : 0;
  };
  Evaluation evaluation = evaluate(roster, mesh_reports(roster, streak), kNow);
  CHECK(evaluation.unreliable_observers == std::vector<std::string>{"de-1", "de-2"});
  CHECK(server(evaluation, "de-1").status == ServerStatus::ok);  // others see it fine
  const ServerVerdict& target = server(evaluation, "de-6");
  CHECK(target.status == ServerStatus::ok);
  CHECK(target.failing == 1);
  CHECK(target.eligible == 5);
  CHECK(target.discarded == 2);
}

TEST_CASE("an observer that never probed T is missing, not eligible") {
  Roster roster = make_roster({"DE"}, {4});
  auto reports = mesh_reports(roster, failing_to(0, {1, 2}));
  auto& results = reports[3].report.view.results;
  results.erase(results.begin());  // de-4 never probed de-1
  Evaluation evaluation = evaluate(roster, reports, kNow);
  const ServerVerdict& verdict = evaluation.servers[0];
  CHECK(verdict.eligible == 2);
  CHECK(verdict.missing == 1);
  CHECK(verdict.quorum == 2);
  CHECK(verdict.status == ServerStatus::unreachable);
  CHECK(verdict.caption == "Unreachable from your servers (2 of 2 servers can't see it)");
}

TEST_CASE("a probe result older than stale_after before its report does not count") {
  Roster roster = make_roster({"DE"}, {4});
  auto reports = mesh_reports(roster, failing_to(0, {1, 2, 3}));
  reports[1].report.view.results[0].last_probe_ms = kReportAt - roster.params.stale_after_ms - 1;
  Evaluation evaluation = evaluate(roster, reports, kNow);
  CHECK(evaluation.servers[0].eligible == 2);
  CHECK(evaluation.servers[0].missing == 1);
  CHECK(evaluation.servers[0].status == ServerStatus::unreachable);  // 2 of 2
}

TEST_CASE("a view on another roster version is no view; self-check still counts") {
  Roster roster = make_roster({"DE"}, {4});
  auto reports = mesh_reports(roster, failing_to(0, {1, 2, 3}));
  reports[3].report.view.roster_version = roster.version - 1;
  reports[3].report.self_check = SelfCheck{true, false, "xray stopped"};
  Evaluation evaluation = evaluate(roster, reports, kNow);
  CHECK(evaluation.servers[0].failing == 2);
  CHECK(evaluation.servers[0].missing == 1);
  CHECK(evaluation.servers[0].status == ServerStatus::unreachable);
  CHECK(evaluation.servers[3].status == ServerStatus::unavailable);
  CHECK_FALSE(evaluation.servers[3].flags.no_data);
}

// Above 128 servers freshness follows the roster's size (docs/VERDICTS.md,
// "Freshness and fleet size"): at 256 servers stale_after counts double.
TEST_CASE("stale versus fresh at the boundary, in a fleet of 256 servers") {
  Roster roster = make_roster({"DE", "NL"}, {128, 128});
  const DurationMs stale = 2 * roster.params.stale_after_ms;
  const std::vector<ObservedReport> reports = {report(0, kReportAt, roster.version),
                                               report(1, kReportAt, roster.version)};
  CHECK_FALSE(evaluate(roster, reports, kReportAt + roster.params.stale_after_ms + 1).servers[0].flags.no_data);
  CHECK_FALSE(evaluate(roster, reports, kReportAt + stale).servers[0].flags.no_data);
  const Evaluation later = evaluate(roster, reports, kReportAt + stale + 1);
  CHECK(later.servers[0].flags.no_data);
  CHECK(later.servers[1].flags.no_data);
  CHECK(later.servers[1].last_report_ms == kReportAt);
}

TEST_CASE("precedence: a powered-off server is unreachable and no_data; unavailable wins") {
  Roster roster = make_roster({"DE"}, {5});
  auto reports = mesh_reports(roster, failing_to(0, {1, 2, 3, 4}), {1, 2, 3, 4});
  Evaluation off = evaluate(roster, reports, kNow);
  CHECK(off.servers[0].status == ServerStatus::unreachable);
  CHECK(off.servers[0].flags == StatusFlags{false, true, true});
  CHECK(off.routes[0].members == std::vector<std::string>{"de-2", "de-3", "de-4", "de-5"});

  reports.push_back(report(0, kReportAt, roster.version));
  reports.back().report.self_check = SelfCheck{false, false, "both down"};
  Evaluation down = evaluate(roster, reports, kNow);
  CHECK(down.servers[0].status == ServerStatus::unavailable);
  CHECK(down.servers[0].flags == StatusFlags{true, true, false});
  CHECK(down.servers[0].caption == "Server unavailable");
}

TEST_CASE("where from: the split by observer country") {
  Roster roster = make_roster({"DE", "RU", "US"}, {3, 3, 2});
  // Russia blocks de-1.
  auto reports = mesh_reports(roster, failing_to(0, {3, 4, 5}));
  Evaluation evaluation = evaluate(roster, reports, kNow);
  const ServerVerdict& verdict = evaluation.servers[0];
  CHECK(verdict.caption == "Unreachable from your servers (3 of 7 servers can't see it)");
  REQUIRE(verdict.by_country.size() == 3);
  CHECK(verdict.by_country[0] == CountryTally{"DE", 0, 2, 0});
  CHECK(verdict.by_country[1] == CountryTally{"RU", 3, 3, 0});
  CHECK(verdict.by_country[2] == CountryTally{"US", 0, 2, 0});
}

TEST_CASE("self-healing: a success, a healthy report, a fresh report") {
  Roster roster = make_roster({"DE"}, {4});
  Evaluator evaluator(roster);
  for (const auto& r : mesh_reports(roster, failing_to(0, {1, 2, 3}))) evaluator.upsert(r);
  CHECK(evaluator.evaluate(kNow).servers[0].status == ServerStatus::unreachable);
  // de-2 probes de-1 successfully once: its streak resets.
  ObservedReport healed = report_probing(1, kReportAt + 60'000, roster.version, {0, 2, 3},
                                         [](std::uint32_t) { return 0u; });
  evaluator.upsert(healed);
  CHECK(evaluator.evaluate(kNow + 60'000).servers[0].status == ServerStatus::ok);

  ObservedReport sick = report(2, kReportAt + 90'000, roster.version);
  sick.report.self_check = SelfCheck{false, true, "listener down"};
  evaluator.upsert(sick);
  CHECK(evaluator.evaluate(kNow + 90'000).servers[2].status == ServerStatus::unavailable);
  evaluator.upsert(report(2, kReportAt + 120'000, roster.version));
  CHECK(evaluator.evaluate(kNow + 120'000).servers[2].status == ServerStatus::ok);

  const UnixMs much_later = kNow + 3'600'000;
  CHECK(evaluator.evaluate(much_later).servers[3].status == ServerStatus::no_data);
  evaluator.upsert(report(3, much_later - 1'000, roster.version));
  CHECK(evaluator.evaluate(much_later).servers[3].status == ServerStatus::ok);
}

TEST_CASE("duplicates: the latest timestamp wins, ties by a fixed rule, in any order") {
  Roster roster = make_roster({"DE"}, {2});
  ObservedReport older = report(0, kReportAt - 1, roster.version);
  older.report.self_check = SelfCheck{false, true, "old"};
  ObservedReport newer = report(0, kReportAt, roster.version);
  ObservedReport twin = newer;
  twin.report.self_check = SelfCheck{false, true, "twin"};
  std::vector<ObservedReport> a = {older, newer, twin};
  std::vector<ObservedReport> b = {twin, newer, older};
  Evaluation first = evaluate(roster, a, kNow);
  CHECK(to_canonical_json(first) == to_canonical_json(evaluate(roster, b, kNow)));
  // report_less puts listener_ok false first, so the healthy twin wins.
  CHECK(first.servers[0].status == ServerStatus::ok);
  CHECK(first.servers[0].last_report_ms == kReportAt);

  std::vector<ObservedReport> outsider = {report(9, kReportAt, roster.version)};
  CHECK(evaluate(roster, outsider, kNow).reports_ignored == 1);
}

TEST_CASE("hostile timestamps and view entries are skipped, never trusted") {
  Roster roster = make_roster({"DE"}, {4});
  auto reports = mesh_reports(roster, failing_to(0, {1, 2, 3}));
  reports[0].timestamp_ms = std::numeric_limits<UnixMs>::min();  // ancient: stale, no overflow
  auto& results = reports[1].report.view.results;
  results.push_back(probe(99, 5, kReportAt));  // outside the roster
  results.push_back(probe(0, 5, kReportAt));   // repeat, out of order
  reports[2].report.view.results.insert(reports[2].report.view.results.begin(),
                                        probe(2, 5, kReportAt));  // its own origin
  reports[2].report.self_check = SelfCheck{false, true, std::string("bad \xff utf-8")};
  Evaluation evaluation = evaluate(roster, reports, kNow);
  CHECK(evaluation.servers[0].status == ServerStatus::unreachable);
  CHECK(evaluation.servers[0].failing == 3);
  CHECK(evaluation.servers[0].flags.no_data);
  CHECK(evaluation.servers[2].status == ServerStatus::unavailable);
  CHECK(to_canonical_json(evaluation).find("bad \xef\xbf\xbd utf-8") != std::string::npos);
}
