// Rotation per user country (node/rotation/country_routes.h), as tables.
#include <doctest/doctest.h>

#include <algorithm>

#include "node/rotation/country_routes.h"
#include "tests/rotation/fixture.h"

namespace mesh::rotation {
namespace {

using test::set_row;
using test::set_status;
using verdict::ServerStatus;
using Ids = std::vector<ServerId>;

// Two DE servers, one NL, one RU; route "eu" holds de-1, de-2, nl-1.
Roster fleet() {
  return test::table_roster({{"de-1", "DE", {"eu"}}, {"de-2", "DE", {"eu"}}, {"nl-1", "NL", {"eu"}},
                             {"ru-1", "RU", {"ru"}}});
}

Ids members(const std::vector<verdict::RouteMembership>& routes, const std::string& id) {
  for (const auto& r : routes) {
    if (r.route_id == id) return r.members;
  }
  return {};
}

TEST_CASE("country_view reads a country's row of a server") {
  const Roster roster = fleet();
  auto evaluation = test::table_evaluation(roster);
  set_row(evaluation, "de-1", "RU", 3, 3);
  set_row(evaluation, "de-1", "NL", 0, 2);
  set_row(evaluation, "de-1", "FI", 1, 3);
  set_row(evaluation, "de-1", "SE", 1, 1);
  const auto& v = test::server(evaluation, "de-1");
  CHECK(country_view(v, "RU") == CountryView::fails);
  CHECK(country_view(v, "NL") == CountryView::reaches);
  CHECK(country_view(v, "FI") == CountryView::split);
  CHECK(country_view(v, "SE") == CountryView::split);  // one witness is never a verdict
  CHECK(country_view(v, "US") == CountryView::none);
}

TEST_CASE("a server blocked only in RU leaves RU's rotation and stays in everyone else's") {
  const Roster roster = fleet();
  auto evaluation = test::table_evaluation(roster);
  set_row(evaluation, "de-1", "RU", 2, 2);
  set_row(evaluation, "de-1", "NL", 0, 1);
  // Globally ok (say the quorum wanted 3): the global answer keeps it.
  REQUIRE(members(evaluation.routes, "eu") == Ids{"de-1", "de-2", "nl-1"});
  CHECK(members(country_routes(roster, evaluation, "RU"), "eu") == Ids{"de-2", "nl-1"});
  CHECK(members(country_routes(roster, evaluation, "NL"), "eu") == Ids{"de-1", "de-2", "nl-1"});
  CHECK(members(country_routes(roster, evaluation, "US"), "eu") == Ids{"de-1", "de-2", "nl-1"});
  CHECK(evaluation.routes == country_routes(roster, evaluation, "US"));
}

TEST_CASE("a server unreachable by RU's witnesses is back in for a country whose witnesses reach it") {
  const Roster roster = fleet();
  auto evaluation = test::table_evaluation(roster);
  set_row(evaluation, "de-1", "RU", 3, 3);
  set_row(evaluation, "de-1", "NL", 0, 2);
  set_status(evaluation, "de-1", ServerStatus::unreachable);
  test::recompute_routes(roster, evaluation);
  REQUIRE(members(evaluation.routes, "eu") == Ids{"de-2", "nl-1"});
  CHECK(members(country_routes(roster, evaluation, "NL"), "eu") == Ids{"de-1", "de-2", "nl-1"});
  CHECK(members(country_routes(roster, evaluation, "RU"), "eu") == Ids{"de-2", "nl-1"});
  // A country with no witness of it follows the global answer.
  CHECK(members(country_routes(roster, evaluation, "US"), "eu") == Ids{"de-2", "nl-1"});
}

TEST_CASE("out for everyone: a failed self-check, and a server held out while ok") {
  const Roster roster = fleet();
  auto evaluation = test::table_evaluation(roster);
  set_row(evaluation, "de-1", "NL", 0, 2);
  set_status(evaluation, "de-1", ServerStatus::unavailable);
  set_row(evaluation, "de-2", "NL", 0, 2);
  test::recompute_routes(roster, evaluation);
  // de-2 ok but held out by the engine: absent from its route's members.
  auto& eu = evaluation.routes[0];
  eu.members.erase(std::find(eu.members.begin(), eu.members.end(), "de-2"));
  CHECK(global_rotation(roster, evaluation) == std::vector<bool>{false, false, true, true});
  CHECK(members(country_routes(roster, evaluation, "NL"), "eu") == Ids{"nl-1"});
}

TEST_CASE("a partitioned evaluation makes no country's failures count") {
  const Roster roster = fleet();
  auto evaluation = test::table_evaluation(roster);
  set_row(evaluation, "de-1", "RU", 3, 3);
  evaluation.partitioned = true;
  CHECK(members(country_routes(roster, evaluation, "RU"), "eu") == Ids{"de-1", "de-2", "nl-1"});
}

TEST_CASE("a route is never empty for a country: its best available, degraded") {
  const Roster roster = fleet();
  auto evaluation = test::table_evaluation(roster);
  set_row(evaluation, "de-1", "RU", 3, 3);
  set_row(evaluation, "de-2", "RU", 2, 3);
  set_row(evaluation, "de-2", "DE", 0, 1);
  set_row(evaluation, "nl-1", "RU", 3, 3);
  set_row(evaluation, "nl-1", "DE", 0, 2);
  set_row(evaluation, "de-1", "NL", 0, 1);
  const auto ru = country_routes(roster, evaluation, "RU");
  // de-2 is not failed by RU outright (2 of 3: split): it stays in.
  CHECK(members(ru, "eu") == Ids{"de-2"});
  CHECK_FALSE(ru[0].degraded);
  set_row(evaluation, "de-2", "RU", 3, 3);
  const auto blocked = country_routes(roster, evaluation, "RU");
  CHECK(blocked[0].degraded);
  // RU fails all three alike; of all witnesses nl-1's fail it least (3 of 5).
  CHECK(blocked[0].members == Ids{"nl-1"});
  CHECK(blocked[0].degraded_reason.find("for users in RU") != std::string::npos);
  // Elsewhere nothing changed.
  CHECK(members(country_routes(roster, evaluation, "DE"), "eu") == Ids{"de-1", "de-2", "nl-1"});
  CHECK(members(blocked, "ru") == Ids{"ru-1"});
}

TEST_CASE("the best available for a country prefers a server that passed its self-check, then the one it fails least") {
  const Roster roster = fleet();
  auto evaluation = test::table_evaluation(roster);
  set_row(evaluation, "de-1", "RU", 3, 3);
  set_status(evaluation, "de-1", ServerStatus::unreachable);
  set_row(evaluation, "de-2", "RU", 2, 2);
  set_status(evaluation, "de-2", ServerStatus::unavailable);
  set_row(evaluation, "nl-1", "RU", 4, 4);
  set_row(evaluation, "nl-1", "NL", 1, 4);
  set_status(evaluation, "nl-1", ServerStatus::unreachable);
  test::recompute_routes(roster, evaluation);
  // RU fails de-1 and nl-1 alike (all its witnesses); of all witnesses 3/3
  // fail de-1 and 5/8 nl-1: nl-1 is RU's best available, de-2 (self-check
  // failed) last.
  const auto ru = country_routes(roster, evaluation, "RU");
  CHECK(ru[0].degraded);
  CHECK(ru[0].members == Ids{"nl-1"});
}

}  // namespace
}  // namespace mesh::rotation
