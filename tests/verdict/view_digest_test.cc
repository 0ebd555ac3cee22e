// ViewDigest (verdict/view_digest.h): it holds exactly the counted results
// of a view, the plain ones as runs of consecutive targets and the others
// copied; and a Tally fed through digests counts what the rules say each
// result counts (an oracle written out per result here).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "tests/verdict/fixtures.h"
#include "verdict/fleet.h"
#include "verdict/tally.h"
#include "verdict/view_digest.h"
#include "verdict/witnesses.h"

using namespace mesh;
using namespace mesh::verdict;
using namespace mesh::verdict::testing;

namespace {

std::vector<std::uint32_t> plain_targets(const ViewDigest& digest) {
  std::vector<std::uint32_t> targets;
  for (const PlainRun& run : digest.plain) {
    for (std::uint32_t i = 0; i < run.count; ++i) targets.push_back(run.first_target + i);
  }
  return targets;
}

// A random view of `origin` over a fleet of `servers`: some results plain,
// some failing (answered or unanswered), some recovered, some stale, some
// naming the origin or no server, some repeated or out of order.
ObservedReport random_view(std::uint32_t origin, std::uint32_t servers, const Parameters& params,
                           std::mt19937_64& rng) {
  ObservedReport observed = report(origin, kT0, 1);
  std::vector<ProbeResult>& results = observed.report.view.results;
  for (std::uint32_t t = 0; t < servers + 3; ++t) {
    const std::uint64_t dice = rng() % 100;
    if (dice < 8) continue;  // not probed
    ProbeResult result = probe(t, 0, kT0 - 10'000);
    if (dice < 14) {
      result = probe(t, 1 + static_cast<std::uint32_t>(rng() % 5), kT0 - 10'000);
    } else if (dice < 18) {
      result = probe(t, 3, kT0 - 10'000);
      result.unanswered_since_ms = kT0 - 40'000;
    } else if (dice < 21) {
      result.recovered = true;
    } else if (dice < 23) {
      result.last_probe_ms = kT0 - params.stale_after_ms - 1;  // stale: not counted
    }
    results.push_back(result);
    if (dice >= 97 && !results.empty()) results.push_back(results.back());  // a repeat
  }
  if (rng() % 2 == 0 && results.size() > 4) std::swap(results[1], results[3]);  // out of order
  return observed;
}

}  // namespace

TEST_CASE("view digest: exactly the counted results, the plain ones in runs") {
  const Roster roster = make_roster({"DE", "FI", "NL"}, {7, 5, 9});
  const Fleet fleet = build_fleet(roster);
  std::mt19937_64 rng(7);
  for (int round = 0; round < 200; ++round) {
    const auto origin = static_cast<std::uint32_t>(rng() % fleet.server_count);
    const ObservedReport observed = random_view(origin, fleet.server_count, roster.params, rng);
    const ViewDigest digest = digest_view(observed, roster.params, fleet);

    std::vector<std::uint32_t> plain;
    std::vector<ProbeResult> other;
    std::vector<std::uint32_t> in_country(fleet.countries.size(), 0);
    for_each_counted_result(observed, roster.params, fleet.server_count, [&](const ProbeResult& result) {
      if (is_plain(result)) {
        plain.push_back(result.target);
        ++in_country[fleet.country_of[result.target]];
      } else {
        other.push_back(result);
      }
    });
    CHECK(digest.origin == origin);
    CHECK(plain_targets(digest) == plain);
    CHECK(digest.other == other);
    CHECK(digest.plain_in_country == in_country);
    for (std::size_t i = 1; i < digest.plain.size(); ++i) {
      // Runs are maximal: two runs never touch.
      CHECK(digest.plain[i - 1].first_target + digest.plain[i - 1].count < digest.plain[i].first_target);
    }
  }
}

TEST_CASE("counted_result finds the result for_each_counted_result visits, and only that") {
  const Roster roster = make_roster({"DE", "FI", "NL"}, {7, 5, 9});
  const Fleet fleet = build_fleet(roster);
  std::mt19937_64 rng(11);
  for (int round = 0; round < 200; ++round) {
    const auto origin = static_cast<std::uint32_t>(rng() % fleet.server_count);
    ObservedReport observed = random_view(origin, fleet.server_count, roster.params, rng);
    // The decoder's order: sorted by target, no repeats.
    std::vector<ProbeResult>& results = observed.report.view.results;
    std::stable_sort(results.begin(), results.end(),
                     [](const ProbeResult& a, const ProbeResult& b) { return a.target < b.target; });
    results.erase(std::unique(results.begin(), results.end(),
                              [](const ProbeResult& a, const ProbeResult& b) { return a.target == b.target; }),
                  results.end());
    std::vector<const ProbeResult*> visited(fleet.server_count + 3, nullptr);
    for_each_counted_result(observed, roster.params, fleet.server_count,
                            [&](const ProbeResult& result) { visited[result.target] = &result; });
    for (std::uint32_t t = 0; t < fleet.server_count + 3; ++t) {
      CAPTURE(t);
      CHECK(counted_result(observed, roster.params, fleet.server_count, t) == visited[t]);
    }
  }
}

TEST_CASE("view digest: a healthy full view is one run (two around the origin)") {
  const Roster roster = make_roster({"DE", "NL"}, {4, 4});
  const Fleet fleet = build_fleet(roster);
  std::vector<ProbeResult> results;
  for (std::uint32_t t = 0; t < 8; ++t) results.push_back(probe(t, 0, kT0 - 1'000));
  const ViewDigest first = digest_view(report(0, kT0, 1, results), roster.params, fleet);
  REQUIRE(first.plain.size() == 1);
  CHECK(first.plain[0].first_target == 1);
  CHECK(first.plain[0].count == 7);
  CHECK(first.other.empty());
  CHECK(first.plain_in_country == std::vector<std::uint32_t>{3, 4});
  const ViewDigest middle = digest_view(report(5, kT0, 1, results), roster.params, fleet);
  REQUIRE(middle.plain.size() == 2);
  CHECK(middle.plain[0].count == 5);
  CHECK(middle.plain[1].first_target == 6);
}

TEST_CASE("tally: views fed through digests count what each result counts, and leave nothing on removal") {
  for (const std::uint32_t witnesses : {0u, 2u}) {
    CAPTURE(witnesses);
    Roster roster = make_roster({"DE", "FI", "NL", "US"}, {6, 3, 8, 5}, witnesses);
    const Fleet fleet = build_fleet(roster);
    const WitnessPlan plan = plan_witnesses(roster, fleet, epoch_of(kT0, roster.params, fleet.server_count));
    std::vector<UnixMs> heard(fleet.server_count, kT0 - 60'000);
    heard[2] = 0;  // never heard: its silence claims hold
    Tally tally(TallyContext{&fleet, &roster.params, &plan, nullptr, &heard});
    const std::uint32_t countries = static_cast<std::uint32_t>(fleet.countries.size());
    std::vector<std::int64_t> reporting(fleet.server_count * countries, 0), failing = reporting,
                                         succeeding = reporting, through(fleet.server_count * countries, 0);
    std::mt19937_64 rng(11 + witnesses);
    std::vector<ObservedReport> views;
    std::vector<ViewDigest> digests;
    for (std::uint32_t origin = 0; origin < fleet.server_count; ++origin) {
      views.push_back(random_view(origin, fleet.server_count, roster.params, rng));
      digests.push_back(digest_view(views.back(), roster.params, fleet));
      ViewShare share;
      tally.contribute(+1, digests.back(), &share);
      CHECK(share.reaches(roster.params, 500) ==
            fails_share(views.back(), roster.params, fleet.server_count, 500));
      // The oracle: each counted witness result, by the rules of tally.h.
      const std::uint32_t country = fleet.country_of[origin];
      for_each_counted_result(views.back(), roster.params, fleet.server_count, [&](const ProbeResult& r) {
        if (!plan.is_witness(origin, r.target)) return;
        const std::size_t cell = static_cast<std::size_t>(country) * fleet.server_count + r.target;
        ++reporting[cell];
        if (r.fail_streak == 0) ++succeeding[cell];
        if (r.fail_streak == 0 && !r.recovered) ++through[origin * countries + fleet.country_of[r.target]];
        if (is_vote(r, roster.params, heard[r.target])) ++failing[cell];
      });
    }
    for (std::uint32_t t = 0; t < fleet.server_count; ++t) {
      for (std::uint32_t c = 0; c < countries; ++c) {
        const std::size_t cell = static_cast<std::size_t>(c) * fleet.server_count + t;
        CHECK(tally.reporting(t, c) == reporting[cell]);
        CHECK(tally.failing(t, c) == failing[cell]);
        CHECK(tally.succeeding(t, c) == succeeding[cell]);
      }
    }
    for (std::uint32_t o = 0; o < fleet.server_count; ++o) {
      for (std::uint32_t c = 0; c < countries; ++c) CHECK(tally.through(o, c) == through[o * countries + c]);
    }
    for (std::uint32_t origin = 0; origin < fleet.server_count; ++origin) {
      tally.contribute(-1, digests[origin]);
    }
    for (std::uint32_t t = 0; t < fleet.server_count; ++t) {
      CHECK(tally.streak_observers(t).empty());
      CHECK(tally.silent_claims(t) == 0);
      for (std::uint32_t c = 0; c < countries; ++c) {
        CHECK(tally.reporting(t, c) == 0);
        CHECK(tally.failing(t, c) == 0);
        CHECK(tally.missing(t, c) == tally.assigned(t, c));
      }
    }
  }
}
