// Route membership: who is in rotation, and the best-available fallback
// when nobody is (docs/VERDICTS.md, "Routes").
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/verdict/fixtures.h"
#include "verdict/fleet.h"
#include "verdict/rules.h"

using namespace mesh;
using namespace mesh::verdict;
using namespace mesh::verdict::testing;

namespace {

using Ids = std::vector<std::string>;

// A verdict with the given flags and votes; the status follows precedence.
ServerVerdict verdict_of(const std::string& id, StatusFlags flags, std::uint32_t failing = 0,
                         std::uint32_t eligible = 0) {
  ServerVerdict verdict;
  verdict.id = id;
  verdict.flags = flags;
  verdict.failing = failing;
  verdict.eligible = eligible;
  verdict.status = flags.unavailable   ? ServerStatus::unavailable
                   : flags.unreachable ? ServerStatus::unreachable
                   : flags.no_data     ? ServerStatus::no_data
                                       : ServerStatus::ok;
  return verdict;
}

constexpr StatusFlags kOk{false, false, false};
constexpr StatusFlags kNoData{false, false, true};
constexpr StatusFlags kUnreachable{false, true, false};
constexpr StatusFlags kOff{false, true, true};
constexpr StatusFlags kUnavailable{true, false, false};

struct Row {
  const char* name;
  std::vector<ServerVerdict> servers;  // de-1..de-4, all on route "de"
  Ids members;
  bool degraded;
};

}  // namespace

TEST_CASE("route membership table") {
  std::vector<Row> table = {
      {"ok and no_data are in rotation, in roster order",
       {verdict_of("de-1", kNoData), verdict_of("de-2", kUnreachable, 3, 3),
        verdict_of("de-3", kOk), verdict_of("de-4", kUnavailable)},
       {"de-1", "de-3"},
       false},
      {"unreachable beats unavailable when nobody is in rotation",
       {verdict_of("de-1", kUnavailable), verdict_of("de-2", kUnreachable, 9, 9),
        verdict_of("de-3", kUnavailable), verdict_of("de-4", kOff, 3, 3)},
       {"de-2", "de-4"},
       true},
      {"lower failing fraction wins (3 of 12 beats 2 of 3)",
       {verdict_of("de-1", kUnreachable, 2, 3), verdict_of("de-2", kUnreachable, 3, 12),
        verdict_of("de-3", kUnreachable, 5, 12), verdict_of("de-4", kUnavailable)},
       {"de-2"},
       true},
      {"ties are all served, in roster order",
       {verdict_of("de-1", kUnreachable, 4, 8), verdict_of("de-2", kUnreachable, 3, 3),
        verdict_of("de-3", kUnreachable, 2, 4), verdict_of("de-4", kUnreachable, 1, 2)},
       {"de-1", "de-3", "de-4"},
       true},
      {"all unavailable: all tied",
       {verdict_of("de-1", kUnavailable), verdict_of("de-2", kUnavailable),
        verdict_of("de-3", kUnavailable), verdict_of("de-4", kUnavailable)},
       {"de-1", "de-2", "de-3", "de-4"},
       true},
      {"unavailable and unreachable: the one that says it is up first",
       {verdict_of("de-1", StatusFlags{true, true, false}, 3, 3),
        verdict_of("de-2", kUnavailable), verdict_of("de-3", kUnreachable, 12, 12),
        verdict_of("de-4", kUnavailable)},
       {"de-3"},
       true},
  };
  Roster roster = make_roster({"DE"}, {4});
  Fleet fleet = build_fleet(roster);
  for (const Row& row : table) {
    CAPTURE(row.name);
    auto routes = route_memberships(roster, fleet, row.servers);
    REQUIRE(routes.size() == 2);  // "all" and "de" hold the same servers
    CHECK(routes[1].route_id == "de");
    CHECK(routes[1].members == row.members);
    CHECK(routes[1].degraded == row.degraded);
    CHECK(routes[1].degraded_reason.empty() == !row.degraded);
    CHECK(routes[0].members == routes[1].members);
  }
}

TEST_CASE("the degraded reason counts unavailable and unreachable servers") {
  Roster roster = make_roster({"DE"}, {3});
  Fleet fleet = build_fleet(roster);
  std::vector<ServerVerdict> servers = {verdict_of("de-1", kUnavailable),
                                        verdict_of("de-2", kUnreachable, 3, 3),
                                        verdict_of("de-3", kOff, 2, 2)};
  auto routes = route_memberships(roster, fleet, servers);
  CHECK(routes[1].degraded_reason ==
        "no server in rotation (1 unavailable, 2 unreachable): serving the best available");
}

TEST_CASE("routes keep roster order, skip other routes' servers, and report empty ones") {
  Roster roster = make_roster({"DE", "NL"}, {2, 2});
  add_route(roster, "mixed", {3, 0});
  roster.routes.push_back(Route{"empty", "nobody"});
  Fleet fleet = build_fleet(roster);
  std::vector<ServerVerdict> servers = {verdict_of("de-1", kOk), verdict_of("de-2", kOk),
                                        verdict_of("nl-1", kOk), verdict_of("nl-2", kNoData)};
  auto routes = route_memberships(roster, fleet, servers);
  REQUIRE(routes.size() == 5);
  CHECK(routes[0].members == Ids{"de-1", "de-2", "nl-1", "nl-2"});
  CHECK(routes[2].members == Ids{"nl-1", "nl-2"});
  CHECK(routes[3].route_id == "mixed");
  CHECK(routes[3].members == Ids{"de-1", "nl-2"});  // roster order, not listing order
  CHECK(routes[4].members.empty());
  CHECK(routes[4].degraded);
  CHECK(routes[4].degraded_reason == "route has no servers");
}
