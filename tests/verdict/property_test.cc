// Property tests over random fleets (fixed seeds, printed on failure):
// order independence, repeatability, healing, quorum, never-empty routes,
// and the incremental Evaluator against the full evaluation.
#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <random>
#include <vector>

#include "tests/verdict/fixtures.h"
#include "tests/verdict/random_fleet.h"
#include "verdict/engine.h"

using namespace mesh;
using namespace mesh::verdict;
using namespace mesh::verdict::testing;

namespace {

constexpr int kFleets = 60;

// A time inside a grace window of the 20-minute epochs, or not.
UnixMs pick_now(std::mt19937_64& rng) {
  const UnixMs base = UnixMs{1'200'000} * 1'416'667;  // an epoch boundary
  return base + static_cast<UnixMs>(rng() % 2'400'000);
}

}  // namespace

TEST_CASE("permuting and duplicating the inputs changes nothing; evaluation repeats") {
  for (std::uint64_t seed = 1; seed <= kFleets; ++seed) {
    CAPTURE(seed);
    std::mt19937_64 rng(seed);
    Roster roster = random_roster(rng);
    RandomReports maker(roster, rng);
    UnixMs now = pick_now(rng);
    std::vector<ObservedReport> reports = maker.fleet_at(now);
    const std::string expected = to_canonical_json(evaluate(roster, reports, now));
    CHECK(expected == to_canonical_json(evaluate(roster, reports, now)));

    std::vector<ObservedReport> noisy = reports;
    for (const ObservedReport& r : reports) {
      ObservedReport older = maker.make(r.origin, r.timestamp_ms - 1 - rng() % 100'000);
      noisy.push_back(older);  // an older report of the same origin never wins
    }
    for (int round = 0; round < 3; ++round) {
      std::shuffle(noisy.begin(), noisy.end(), rng);
      CHECK(to_canonical_json(evaluate(roster, noisy, now)) == expected);
    }
  }
}

TEST_CASE("no route with servers is ever empty") {
  for (std::uint64_t seed = 100; seed < 100 + kFleets; ++seed) {
    CAPTURE(seed);
    std::mt19937_64 rng(seed);
    Roster roster = random_roster(rng);
    RandomReports maker(roster, rng);
    // Make things bad: block most pairs, break many self-checks.
    for (std::uint32_t c = 0; c < 5; ++c) {
      for (std::uint32_t t = 0; t < roster.servers.size(); ++t) {
        if (rng() % 3 != 0) maker.blocked.emplace(c, t);
      }
    }
    UnixMs now = pick_now(rng);
    std::vector<ObservedReport> reports = maker.fleet_at(now);
    for (ObservedReport& r : reports) {
      if (rng() % 2 == 0) r.report.self_check.service_ok = false;
    }
    Evaluation evaluation = evaluate(roster, reports, now);
    Fleet fleet = build_fleet(roster);
    for (std::size_t r = 0; r < evaluation.routes.size(); ++r) {
      CHECK(evaluation.routes[r].members.empty() == fleet.route_members[r].empty());
    }
  }
}

TEST_CASE("a success heals: healed results lift unreachable, and all healed leave nothing") {
  int lifted = 0;
  for (std::uint64_t seed = 200; seed < 200 + kFleets; ++seed) {
    CAPTURE(seed);
    std::mt19937_64 rng(seed);
    Roster roster = random_roster(rng);
    RandomReports maker(roster, rng);
    maker.max_report_age_ms = 150'000;  // few silent servers: the fleet is not split
    UnixMs now = pick_now(rng);
    std::vector<ObservedReport> reports = maker.fleet_at(now);
    Evaluation before = evaluate(roster, reports, now);
    for (std::uint32_t t = 0; t < roster.servers.size(); ++t) {
      if (!before.servers[t].flags.unreachable) continue;
      std::vector<ObservedReport> healing = reports;
      ServerVerdict last = before.servers[t];
      // Heal the probe results to t one at a time (reliable observers only).
      // A verdict never stands without its quorum; once every result is
      // healed, nothing is left.
      for (ObservedReport& r : healing) {
        auto& unreliable = before.unreliable_observers;
        if (std::count(unreliable.begin(), unreliable.end(), roster.servers[r.origin].id)) continue;
        for (ProbeResult& result : r.report.view.results) {
          if (result.target != t || result.fail_streak == 0) continue;
          result = probe(t, 0, result.last_probe_ms);
          ServerVerdict now_verdict = evaluate(roster, healing, now).servers[t];
          CHECK((!now_verdict.flags.unreachable || now_verdict.failing >= now_verdict.quorum));
          if (last.flags.unreachable && !now_verdict.flags.unreachable) ++lifted;
          last = now_verdict;
        }
      }
      CHECK(last.failing == 0);
      CHECK_FALSE(last.flags.unreachable);
      CHECK_FALSE(last.flags.insufficient_evidence);
    }
  }
  CHECK(lifted > 10);  // the property was exercised, not vacuous
}

TEST_CASE("the incremental Evaluator equals the full evaluation, byte for byte") {
  int compared = 0;
  for (std::uint64_t seed = 300; seed < 300 + kFleets / 2; ++seed) {
    CAPTURE(seed);
    std::mt19937_64 rng(seed);
    Roster roster = random_roster(rng);
    RandomReports maker(roster, rng);
    Evaluator evaluator(roster);
    std::vector<ObservedReport> offered;
    UnixMs now = pick_now(rng);
    for (int step = 0; step < 80; ++step) {
      now += static_cast<UnixMs>(rng() % 200'000);
      std::uint32_t burst = static_cast<std::uint32_t>(rng() % 6);
      for (std::uint32_t i = 0; i < burst; ++i) {
        std::uint32_t origin = static_cast<std::uint32_t>(rng() % (roster.servers.size() + 1));
        UnixMs at = now - static_cast<UnixMs>(rng() % 250'000);  // sometimes older than held
        ObservedReport r = origin < roster.servers.size() ? maker.make(origin, at)
                                                         : report(origin, at, roster.version);
        offered.push_back(r);
        evaluator.upsert(r);
      }
      if (rng() % 3 == 0) continue;  // several upserts between evaluations
      Evaluation incremental = evaluator.evaluate(now);
      Evaluation full = evaluate(roster, offered, now);
      CHECK(incremental == full);
      if (compared % 16 == 0) {  // the canonical bytes too (slow in Debug, so sampled)
        CHECK(to_canonical_json(incremental) == to_canonical_json(full));
        CHECK(evaluation_digest(incremental) == evaluation_digest(full));
      }
      ++compared;
    }
  }
  CHECK(compared > 1000);
}

// The incremental path again, under what the one above does not draw:
// borders (far sides explained), clock steps back, repeated offers of held
// reports in a shuffled order, and roster changes (set_roster, then every
// report offered again, as the daemon's feed does).
TEST_CASE("the incremental Evaluator equals the full evaluation across borders, roster changes and clock steps") {
  int compared = 0, with_explained = 0, with_unreliable = 0, roster_changes = 0, steps_back = 0;
  for (std::uint64_t seed = 400; seed < 400 + kFleets / 2; ++seed) {
    CAPTURE(seed);
    std::mt19937_64 rng(seed);
    Roster roster = random_roster(rng);
    auto maker = std::make_unique<RandomReports>(roster, rng);
    auto draw_border = [&] {
      const std::uint32_t countries = static_cast<std::uint32_t>(build_fleet(roster).countries.size());
      if (countries >= 2 && rng() % 4 != 0) maker->borders.emplace(0, 1 + static_cast<std::uint32_t>(rng() % (countries - 1)));
    };
    draw_border();
    Evaluator evaluator(roster);
    std::vector<ObservedReport> offered;
    UnixMs now = pick_now(rng);
    for (int step = 0; step < 80; ++step) {
      const std::uint64_t what = rng() % 20;
      if (what == 0) {  // a new roster: other servers, the next version
        Roster next = random_roster(rng);
        next.version = roster.version + 1;
        roster = std::move(next);
        maker = std::make_unique<RandomReports>(roster, rng);
        draw_border();
        evaluator.set_roster(roster);
        for (const ObservedReport& held : offered) evaluator.upsert(held);
        ++roster_changes;
      } else if (what <= 2) {  // the clock steps back
        now -= static_cast<UnixMs>(rng() % 300'000);
        ++steps_back;
      } else if (what == 3 && !offered.empty()) {  // held reports offered again, shuffled
        std::vector<ObservedReport> again(offered.end() - std::min<std::size_t>(offered.size(), 8), offered.end());
        std::shuffle(again.begin(), again.end(), rng);
        for (ObservedReport& r : again) {
          CHECK_FALSE(evaluator.upsert(r));
          offered.push_back(std::move(r));  // an outsider is counted again by both
        }
      } else {
        now += static_cast<UnixMs>(rng() % 200'000);
        const std::uint32_t burst = static_cast<std::uint32_t>(rng() % 8);
        for (std::uint32_t i = 0; i < burst; ++i) {
          const std::uint32_t origin = static_cast<std::uint32_t>(rng() % (roster.servers.size() + 1));
          const UnixMs at = now - static_cast<UnixMs>(rng() % 250'000);
          ObservedReport r = origin < roster.servers.size() ? maker->make(origin, at)
                                                           : report(origin, at, roster.version);
          offered.push_back(r);
          evaluator.upsert(std::move(r));
        }
      }
      if (rng() % 3 == 0) continue;
      Evaluation incremental = evaluator.evaluate(now);
      Evaluation full = evaluate(roster, offered, now);
      CHECK(incremental == full);
      if (compared % 16 == 0) CHECK(to_canonical_json(incremental) == to_canonical_json(full));
      ++compared;
      with_unreliable += !full.unreliable_observers.empty();
      for (const ServerVerdict& server : full.servers) {
        if (server.explained > 0) {
          ++with_explained;
          break;
        }
      }
    }
  }
  // Each path was exercised, not vacuous.
  CHECK(compared > 1000);
  CHECK(with_explained > 50);
  CHECK(with_unreliable > 50);
  CHECK(roster_changes > 50);
  CHECK(steps_back > 100);
  MESSAGE("compared ", compared, ", far sides in ", with_explained, ", unreliable in ", with_unreliable);
}
