// Alerts' transitions (node/rotation/alert_tracker.h), as tables.
#include <doctest/doctest.h>

#include <algorithm>

#include "node/rotation/alert_tracker.h"
#include "tests/rotation/fixture.h"

namespace mesh::rotation {
namespace {

using verdict::ServerStatus;

Roster fleet() {
  return test::table_roster({{"de-1", "DE", {"eu"}}, {"de-2", "DE", {"eu"}}, {"ru-1", "RU", {"ru"}}});
}

verdict::Evaluation at(const Roster& roster, UnixMs now, ServerStatus de1 = ServerStatus::ok) {
  auto evaluation = test::table_evaluation(roster, now);
  test::set_row(evaluation, "de-1", "RU", de1 == ServerStatus::unreachable ? 3 : 0, 3);
  test::set_status(evaluation, "de-1", de1);
  test::recompute_routes(roster, evaluation);
  return evaluation;
}

TEST_CASE("one alert per transition; the first evaluation is the baseline") {
  const Roster roster = fleet();
  AlertTracker tracker;
  tracker.observe(roster, at(roster, 1'000, ServerStatus::unreachable));
  CHECK(tracker.pending() == 0);
  tracker.observe(roster, at(roster, 2'000, ServerStatus::unreachable));
  CHECK(tracker.pending() == 0);
  tracker.observe(roster, at(roster, 3'000));
  tracker.observe(roster, at(roster, 4'000));
  tracker.observe(roster, at(roster, 5'000, ServerStatus::unreachable));
  const auto alerts = tracker.take_pending();
  REQUIRE(alerts.size() == 2);
  CHECK(alerts[0].server == "de-1");
  CHECK(alerts[0].from == "unreachable");
  CHECK(alerts[0].to == "ok");
  CHECK(alerts[0].in_rotation);
  CHECK(alerts[1].to == "unreachable");
  CHECK(alerts[1].caption == "Unreachable from your servers (3 of 3 servers can't see it)");
  CHECK(alerts[1].by_country == "RU 3/3");
  CHECK(alerts[1].routes == std::vector<std::string>{"eu"});
  CHECK_FALSE(alerts[1].in_rotation);
  CHECK(alerts[1].at_ms == 5'000);
  CHECK(tracker.pending() == 0);
}

TEST_CASE("a node catching up after its start: leaving no_data is no transition for stale_after_ms") {
  Roster roster = fleet();
  roster.params.stale_after_ms = 6'000;
  AlertTracker tracker;
  auto silent = at(roster, 1'000);
  test::set_status(silent, "de-1", ServerStatus::no_data);
  test::set_status(silent, "de-2", ServerStatus::no_data);
  tracker.observe(roster, silent);  // the baseline: nothing heard yet
  auto heard = at(roster, 3'000);
  test::set_status(heard, "de-2", ServerStatus::no_data);
  tracker.observe(roster, heard);   // de-1 heard: caught up, no alert
  CHECK(tracker.pending() == 0);
  tracker.observe(roster, at(roster, 7'000));  // de-2 heard only after stale_after_ms: a transition
  auto alerts = tracker.take_pending();
  REQUIRE(alerts.size() == 1);
  CHECK(alerts[0].server == "de-2");
  CHECK(alerts[0].from == "no_data");
  tracker.observe(roster, at(roster, 8'000, ServerStatus::unreachable));
  CHECK(tracker.pending() == 1);
}

TEST_CASE("a warming node catching up: every change moves its baseline silently") {
  const Roster roster = fleet();
  AlertTracker tracker;
  tracker.observe(roster, at(roster, 1'000), true);  // the baseline, from old reports
  tracker.observe(roster, at(roster, 2'000, ServerStatus::unreachable), true);  // caught up: it was out
  CHECK(tracker.pending() == 0);
  // The evaluation in which the node turns warm took in the report that
  // ended its warm-up (a warm sender told that change already): silent.
  tracker.observe(roster, at(roster, 3'000), false);
  CHECK(tracker.pending() == 0);
  tracker.observe(roster, at(roster, 4'000, ServerStatus::unreachable), false);  // warm: a transition again
  const auto alerts = tracker.take_pending();
  REQUIRE(alerts.size() == 1);
  CHECK(alerts[0].from == "ok");
  CHECK(alerts[0].to == "unreachable");
  CHECK(alerts[0].at_ms == 4'000);
}

TEST_CASE("held out while ok is a state of its own") {
  const Roster roster = fleet();
  AlertTracker tracker;
  tracker.observe(roster, at(roster, 1'000));
  auto held = at(roster, 2'000);
  auto& eu = held.routes[0].members;
  eu.erase(std::find(eu.begin(), eu.end(), "de-1"));
  tracker.observe(roster, held);
  const auto alerts = tracker.take_pending();
  REQUIRE(alerts.size() == 1);
  CHECK(alerts[0].from == "ok");
  CHECK(alerts[0].to == "held_out");
  CHECK_FALSE(alerts[0].in_rotation);
}

TEST_CASE("a flapping server sends one flapping message, then one when it settles") {
  const Roster roster = fleet();
  AlertSettings settings;
  settings.flap_changes = 4;
  settings.flap_window_ms = 600'000;
  settings.settle_ms = 300'000;
  AlertTracker tracker(settings);
  tracker.observe(roster, at(roster, 0));
  UnixMs now = 0;
  for (int flap = 0; flap < 20; ++flap) {
    now += 10'000;
    tracker.observe(roster, at(roster, now, flap % 2 == 0 ? ServerStatus::unreachable : ServerStatus::ok));
  }
  auto alerts = tracker.take_pending();
  REQUIRE(alerts.size() == 4);  // three transitions, then "flapping"
  CHECK(alerts[3].kind == Alert::Kind::flapping);
  CHECK(alerts[3].caption.starts_with("Flapping: 4 changes"));
  // Quiet in one state (ok) for less than settle_ms: nothing.
  tracker.observe(roster, at(roster, now + 299'999));
  CHECK(tracker.pending() == 0);
  tracker.observe(roster, at(roster, now + 300'000));
  alerts = tracker.take_pending();
  REQUIRE(alerts.size() == 1);
  CHECK(alerts[0].kind == Alert::Kind::settled);
  CHECK(alerts[0].from == "flapping");
  CHECK(alerts[0].to == "ok");
  // Settled: the next transition is a plain one again.
  tracker.observe(roster, at(roster, now + 400'000, ServerStatus::unreachable));
  alerts = tracker.take_pending();
  REQUIRE(alerts.size() == 1);
  CHECK(alerts[0].kind == Alert::Kind::transition);
}

TEST_CASE("a node that is not the owner drops what the owner has handled, keeps the rest for a takeover") {
  const Roster roster = fleet();
  AlertTracker tracker;
  tracker.observe(roster, at(roster, 1'000));
  tracker.observe(roster, at(roster, 2'000, ServerStatus::unreachable));
  tracker.observe(roster, at(roster, 3'000));
  tracker.drop_handled(2'000);  // the owner reported at 2 s: it saw the first
  const auto alerts = tracker.take_pending();
  REQUIRE(alerts.size() == 1);
  CHECK(alerts[0].to == "ok");
}

TEST_CASE("pending alerts are bounded: the oldest go first") {
  const Roster roster = fleet();
  AlertSettings settings;
  settings.pending_max = 3;
  settings.flap_changes = 1000;
  AlertTracker tracker(settings);
  tracker.observe(roster, at(roster, 0));
  for (int i = 1; i <= 10; ++i) {
    tracker.observe(roster, at(roster, i * 1'000, i % 2 ? ServerStatus::unreachable : ServerStatus::ok));
  }
  const auto alerts = tracker.take_pending();
  REQUIRE(alerts.size() == 3);
  CHECK(alerts[0].at_ms == 8'000);
}

TEST_CASE("a new roster is a new baseline") {
  Roster roster = fleet();
  AlertTracker tracker;
  tracker.observe(roster, at(roster, 1'000));
  roster.version = 8;
  auto evaluation = at(roster, 2'000, ServerStatus::unreachable);
  evaluation.roster_version = 8;
  tracker.observe(roster, evaluation);
  CHECK(tracker.pending() == 0);
}

}  // namespace
}  // namespace mesh::rotation
