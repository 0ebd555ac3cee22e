// The panel sync's plan (node/rotation/host_plan.h), as tables.
#include <doctest/doctest.h>

#include "node/rotation/host_plan.h"
#include "tests/rotation/fixture.h"

namespace mesh::rotation {
namespace {

using verdict::ServerStatus;

Roster fleet() {
  return test::table_roster({{"de-1", "DE", {"eu"}}, {"de-2", "DE", {"eu"}}, {"nl-1", "NL", {"eu", "nl"}},
                             {"w-1", "FI", {}}});
}

// One host per server at its probe endpoint, plus one the roster does not know.
std::vector<PanelHost> hosts(bool enabled = true) {
  return {{"u1", "DE 1", "de-1.example.net", 443, enabled},
          {"u2", "DE 2", "DE-2.example.net", 443, enabled},
          {"u3", "NL 1", "nl-1.example.net", 443, enabled},
          {"u4", "Witness", "w-1.example.net", 443, enabled},
          {"u5", "Someone else's", "other.example.org", 443, enabled}};
}

std::vector<std::string> ids(const std::vector<HostChange>& changes) {
  std::vector<std::string> out;
  for (const auto& c : changes) out.push_back(c.host_id);
  return out;
}

TEST_CASE("hosts bind to servers by address and port, or by the explicit map") {
  const Roster roster = fleet();
  auto list = hosts();
  list.push_back({"u6", "DE 1 (cdn)", "cdn.example.com", 8443, true});
  list.push_back({"u7", "DE 1 wrong port", "de-1.example.net", 8443, true});
  const HostMap map = {{"de-1", {"DE 1 (cdn)"}}, {"nobody", {"u5"}}};
  CHECK(bind_hosts(roster, list, map) == std::vector<std::int64_t>{0, 1, 2, 3, -1, 0, -1});
}

TEST_CASE("the plan is the difference between the panel and the rotation, and nothing else") {
  const Roster roster = fleet();
  auto evaluation = test::table_evaluation(roster);
  SUBCASE("all in rotation, all enabled: nothing to do") {
    const SyncPlan plan = plan_sync(roster, evaluation.routes, hosts(), {}, 100);
    CHECK(plan.empty());
    CHECK(plan.unknown_hosts == 1);
  }
  SUBCASE("a server out of rotation: its host is disabled; a witness-only server's host is left alone") {
    test::set_status(evaluation, "de-1", ServerStatus::unreachable);
    test::set_status(evaluation, "w-1", ServerStatus::unreachable);
    test::recompute_routes(roster, evaluation);
    const SyncPlan plan = plan_sync(roster, evaluation.routes, hosts(), {}, 100);
    CHECK(ids(plan.disable) == std::vector<std::string>{"u1"});
    CHECK(plan.disable[0].server == "de-1");
    CHECK(plan.enable.empty());
  }
  SUBCASE("healed, or re-enabled by hand: the same level decides") {
    auto list = hosts();
    list[0].enabled = false;  // disabled earlier; de-1 is back in rotation
    const SyncPlan plan = plan_sync(roster, evaluation.routes, list, {}, 100);
    CHECK(ids(plan.enable) == std::vector<std::string>{"u1"});
    test::set_status(evaluation, "de-1", ServerStatus::unreachable);
    test::recompute_routes(roster, evaluation);
    // Enabled by hand while still out: disabled again.
    CHECK(ids(plan_sync(roster, evaluation.routes, hosts(), {}, 100).disable) == std::vector<std::string>{"u1"});
  }
  SUBCASE("a host unknown to the roster is never touched, even disabled") {
    auto list = hosts();
    list[4].enabled = false;
    CHECK(plan_sync(roster, evaluation.routes, list, {}, 100).empty());
  }
}

TEST_CASE("never the last enabled host of a route") {
  const Roster roster = fleet();
  auto evaluation = test::table_evaluation(roster);
  for (const char* id : {"de-1", "de-2", "nl-1"}) test::set_status(evaluation, id, ServerStatus::unreachable);
  test::recompute_routes(roster, evaluation);
  SUBCASE("the route's best available keeps its hosts") {
    // The route serves its best available: all three stay wanted.
    CHECK(plan_sync(roster, evaluation.routes, hosts(), {}, 100).empty());
  }
  SUBCASE("the best available has no host in the panel: the route's hosts stay as they are") {
    auto routes = evaluation.routes;
    routes[0].members = {"ghost"};  // a member the panel lists no host of
    routes[1].members = {"ghost"};
    const SyncPlan plan = plan_sync(roster, routes, hosts(), {}, 100);
    CHECK(plan.disable.empty());
    CHECK(ids(plan.kept_last) == std::vector<std::string>{"u1", "u2", "u3"});
  }
}

TEST_CASE("a cap on changes: enables first, the rest deferred") {
  const Roster roster = fleet();
  auto evaluation = test::table_evaluation(roster);
  test::set_status(evaluation, "de-2", ServerStatus::unavailable);
  test::recompute_routes(roster, evaluation);
  auto list = hosts();
  list[0].enabled = false;  // de-1: to enable
  list[2].enabled = false;  // nl-1: to enable
  const SyncPlan plan = plan_sync(roster, evaluation.routes, list, {}, 2);
  CHECK(ids(plan.enable) == std::vector<std::string>{"u1", "u3"});
  CHECK(plan.disable.empty());
  CHECK(plan.deferred == 1);
  const SyncPlan next = plan_sync(roster, evaluation.routes, list, {}, 0);
  CHECK(next.empty());
  CHECK(next.deferred == 3);
}

TEST_CASE("ChangeBudget: a sliding minute") {
  ChangeBudget budget(10);
  CHECK(budget.remaining(0) == 10);
  budget.spend(0, 7);
  CHECK(budget.remaining(30'000) == 3);
  budget.spend(30'000, 3);
  CHECK(budget.remaining(59'999) == 0);
  CHECK(budget.remaining(60'000) == 7);
  CHECK(budget.remaining(90'000) == 10);
}

}  // namespace
}  // namespace mesh::rotation
