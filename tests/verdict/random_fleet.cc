#include "tests/verdict/random_fleet.h"

#include <algorithm>
#include <string>

#include "tests/verdict/fixtures.h"

namespace mesh::verdict::testing {
namespace {

std::uint32_t uniform(std::mt19937_64& rng, std::uint32_t low, std::uint32_t high) {
  return std::uniform_int_distribution<std::uint32_t>(low, high)(rng);
}

bool chance(std::mt19937_64& rng, std::uint32_t percent) { return uniform(rng, 1, 100) <= percent; }

}  // namespace

Roster random_roster(std::mt19937_64& rng) {
  const std::vector<std::string> all = {"DE", "FI", "NL", "RU", "US"};
  std::uint32_t country_count = uniform(rng, 1, 4);
  std::vector<std::string> countries(all.begin(), all.begin() + country_count);
  std::vector<std::uint32_t> sizes;
  for (std::uint32_t c = 0; c < country_count; ++c) {
    sizes.push_back(chance(rng, 15) ? 25 : uniform(rng, 1, 12));
  }
  const std::uint32_t k_choices[] = {0, 2, 3};
  Roster roster = make_roster(countries, sizes, k_choices[uniform(rng, 0, 2)]);
  roster.params.epoch_ms = 1'200'000;
  std::vector<std::uint32_t> subset;
  for (std::uint32_t i = 0; i < roster.servers.size(); ++i) {
    if (chance(rng, 30)) subset.push_back(i);
  }
  add_route(roster, "subset", subset);
  return roster;
}

RandomReports::RandomReports(const Roster& roster, std::mt19937_64& rng)
    : roster_(roster), fleet_(build_fleet(roster)), rng_(rng) {
  for (std::uint32_t t = 0; t < fleet_.server_count; ++t) {
    if (!chance(rng_, 20)) continue;
    for (std::uint32_t c = 0; c < fleet_.countries.size(); ++c) {
      if (chance(rng_, 60)) blocked.emplace(c, t);
    }
  }
}

const WitnessPlan& RandomReports::plan(std::uint64_t epoch) {
  auto it = plans_.find(epoch);
  if (it == plans_.end()) it = plans_.emplace(epoch, plan_witnesses(roster_, fleet_, epoch)).first;
  return it->second;
}

std::uint32_t RandomReports::streak_for(std::uint32_t origin, std::uint32_t target, bool broken) {
  const std::uint32_t from = fleet_.country_of[origin];
  const std::uint32_t to = fleet_.country_of[target];
  if (broken || blocked.count({from, target}) || borders.count({from, to}) || borders.count({to, from})) {
    return uniform(rng_, 1, 6);
  }
  return chance(rng_, 5) ? uniform(rng_, 1, 4) : 0;
}

ObservedReport RandomReports::make(std::uint32_t origin, UnixMs at_ms) {
  const Parameters& params = roster_.params;
  std::uint64_t epoch = epoch_of(at_ms, params, fleet_.server_count);
  std::vector<std::uint32_t> targets =
      probe_targets(plan(epoch), plan(epoch + 1), origin, at_ms, params);
  if (chance(rng_, 10) && fleet_.server_count > 1) targets.push_back(uniform(rng_, 0, fleet_.server_count - 1));
  std::sort(targets.begin(), targets.end());
  targets.erase(std::unique(targets.begin(), targets.end()), targets.end());
  bool broken = chance(rng_, 8);
  std::vector<ProbeResult> results;
  for (std::uint32_t t : targets) {
    if (t == origin || chance(rng_, 5)) continue;
    UnixMs probed = at_ms - (chance(rng_, 3) ? 400'000 : uniform(rng_, 0, 60'000));
    ProbeResult result = probe(t, streak_for(origin, t, broken), probed);
    // Failures are unanswered now and then, since a time around the
    // target's reports, so that a target's new report re-judges the silence
    // claims against it (Evaluator::upsert).
    if (result.fail_streak > 0 && chance(rng_, 30)) {
      result.unanswered_since_ms = probed - static_cast<UnixMs>(uniform(rng_, 0, 120'000));
    }
    results.push_back(result);
  }
  ObservedReport observed = report(origin, at_ms, roster_.version, std::move(results));
  if (chance(rng_, 3)) observed.report.view.roster_version = roster_.version - 1;
  if (chance(rng_, 5)) observed.report.self_check = SelfCheck{chance(rng_, 50), false, "down"};
  observed.report.metrics.uptime_s = uniform(rng_, 0, 1'000'000);
  return observed;
}

std::vector<ObservedReport> RandomReports::fleet_at(UnixMs now_ms) {
  std::vector<ObservedReport> reports;
  for (std::uint32_t o = 0; o < fleet_.server_count; ++o) {
    if (chance(rng_, 7)) continue;
    reports.push_back(make(o, now_ms - uniform(rng_, 0, max_report_age_ms)));
  }
  return reports;
}

}  // namespace mesh::verdict::testing
