// The worked example of docs/VERDICTS.md, step by step, so the document
// cannot drift from the code.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/verdict/fixtures.h"
#include "verdict/engine.h"

using namespace mesh;
using namespace mesh::verdict;
using namespace mesh::verdict::testing;

namespace {

using Ids = std::vector<std::string>;
constexpr std::uint32_t kDe1 = 0, kDe2 = 1, kDe3 = 2, kRu2 = 4;

// Every server reports at `at`, probing all others; streak(o, t) per pair.
void report_all(Evaluator& evaluator, UnixMs at,
                const std::function<std::uint32_t(std::uint32_t, std::uint32_t)>& streak,
                const std::vector<std::uint32_t>& service_down = {}) {
  for (std::uint32_t o = 0; o < 6; ++o) {
    ObservedReport r = report_probing(o, at, 7, {0, 1, 2, 3, 4, 5},
                                      [&](std::uint32_t t) { return streak(o, t); });
    for (std::uint32_t down : service_down) {
      if (down == o) r.report.self_check = SelfCheck{true, false, "service stopped"};
    }
    evaluator.upsert(r);
  }
}

}  // namespace

TEST_CASE("docs/VERDICTS.md worked example: 6 servers in 2 countries") {
  Roster roster = make_roster({"DE", "RU"}, {3, 3}, 3);
  CHECK(plan_witnesses(roster, 0).full_mesh);
  Evaluator evaluator(roster);
  const UnixMs noon = kT0;
  auto minute = [&](int m) { return noon + m * 60'000; };
  auto blocked = [](std::uint32_t streak) {
    return [streak](std::uint32_t o, std::uint32_t t) { return (o >= 3 && t == kDe1) ? streak : 0u; };
  };

  Evaluation step1 = evaluator.evaluate(minute(0));
  for (const auto& s : step1.servers) CHECK(s.status == ServerStatus::no_data);
  CHECK(step1.routes[0].members.size() == 6);

  report_all(evaluator, minute(1), blocked(1));
  for (const auto& s : evaluator.evaluate(minute(1)).servers) CHECK(s.status == ServerStatus::ok);

  report_all(evaluator, minute(3), blocked(3));
  Evaluation step3 = evaluator.evaluate(minute(3));
  CHECK(step3.servers[kDe1].caption == "Unreachable from your servers (3 of 5 servers can't see it)");
  CHECK(step3.servers[kDe1].by_country ==
        std::vector<CountryTally>{{"DE", 0, 2, 0}, {"RU", 3, 3, 0}});
  CHECK(step3.unreliable_observers.empty());
  CHECK(step3.routes[1].members == Ids{"de-2", "de-3"});

  auto uplink_lost = [](std::uint32_t o, std::uint32_t t) -> std::uint32_t {
    if (o == kRu2) return 10;
    return (o >= 3 && t == kDe1) ? 10 : 0;
  };
  report_all(evaluator, minute(10), uplink_lost);
  Evaluation step4 = evaluator.evaluate(minute(10));
  CHECK(step4.unreliable_observers == Ids{"ru-2"});
  CHECK(step4.servers[kDe1].status == ServerStatus::ok);
  CHECK(step4.servers[kDe1].eligible == 4);
  CHECK(step4.servers[kDe1].failing == 2);
  CHECK(step4.servers[kDe1].discarded == 1);
  CHECK(step4.servers[kRu2].status == ServerStatus::ok);

  report_all(evaluator, minute(15), blocked(15), {kDe2, kDe3});
  Evaluation step5 = evaluator.evaluate(minute(15));
  CHECK(step5.servers[kDe1].status == ServerStatus::unreachable);
  CHECK(step5.routes[1].members == Ids{"de-1"});
  CHECK(step5.routes[1].degraded);
  CHECK(step5.routes[1].degraded_reason ==
        "no server in rotation (2 unavailable, 1 unreachable): serving the best available");

  report_all(evaluator, minute(20), blocked(0));
  Evaluation step6 = evaluator.evaluate(minute(20));
  for (const auto& s : step6.servers) CHECK(s.status == ServerStatus::ok);
  CHECK_FALSE(step6.routes[1].degraded);
}
