// Problems that stand while the node runs are logged at once, then every
// interval until fixed (node/standing_problems.h), on virtual time.
#include <doctest/doctest.h>

#include "node/standing_problems.h"

namespace mesh::node {
namespace {

constexpr UnixMs kT0 = 1'700'000'000'000;

TEST_CASE("a problem is logged when it appears, then every minute while it stands, and not after it is fixed") {
  StandingProblems problems(60'000);
  CHECK(problems.due(kT0).empty());
  CHECK(problems.set("roster_file_refused", "roster file refused: damaged"));
  CHECK_FALSE(problems.set("roster_file_refused", "roster file refused: damaged"));  // the same
  auto first = problems.due(kT0);
  REQUIRE(first.size() == 1);
  CHECK(first[0].code == "roster_file_refused");
  CHECK(problems.due(kT0 + 1'000).empty());
  CHECK(problems.due(kT0 + 59'999).empty());
  CHECK(problems.due(kT0 + 60'000).size() == 1);
  CHECK(problems.due(kT0 + 61'000).empty());
  CHECK(problems.due(kT0 + 120'000).size() == 1);
  // A changed message is news at once.
  CHECK(problems.set("roster_file_refused", "roster file refused: wrong_key"));
  auto changed = problems.due(kT0 + 121'000);
  REQUIRE(changed.size() == 1);
  CHECK(changed[0].message == "roster file refused: wrong_key");
  CHECK(problems.set("roster_file_refused", std::nullopt));
  CHECK(problems.empty());
  CHECK(problems.due(kT0 + 600'000).empty());
  CHECK_FALSE(problems.set("roster_file_refused", std::nullopt));
}

TEST_CASE("several problems are kept apart, in the order they appeared") {
  StandingProblems problems(60'000);
  problems.set("not_in_roster", "no server 'n9'");
  problems.due(kT0);
  problems.set("roster_file_refused", "refused");
  auto due = problems.due(kT0 + 10'000);
  REQUIRE(due.size() == 1);
  CHECK(due[0].code == "roster_file_refused");
  const auto all = problems.all();
  REQUIRE(all.size() == 2);
  CHECK(all[0].code == "not_in_roster");
  CHECK(all[1].code == "roster_file_refused");
  // A clock stepped back does not silence them.
  CHECK(problems.due(kT0 - 5'000).size() == 2);
}

}  // namespace
}  // namespace mesh::node
