// Random fleets and reports for the property tests. Seeded by the caller
// (std::mt19937_64 with a fixed seed printed on failure): the randomness
// lives in the tests, never in the library.
#pragma once

#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "record/roster.h"
#include "verdict/fleet.h"
#include "verdict/observed.h"
#include "verdict/witnesses.h"

namespace mesh::verdict::testing {

// 1-4 countries of 1-12 servers (sometimes 25), witnesses_per_country 0, 2
// or 3, an extra route over a random subset (maybe empty), and a short
// epoch (20 min) so that runs cross switches and grace windows.
Roster random_roster(std::mt19937_64& rng);

// Writes reports the way nodes would, with noise: each observer probes its
// probe_targets() (sometimes one extra target), a few results are dropped
// or old, a few observers are broken (fail everything), some self-checks
// fail, some views are on an older roster; (country, target) pairs in
// `blocked` fail with a streak of 1-6.
class RandomReports {
 public:
  RandomReports(const Roster& roster, std::mt19937_64& rng);
  std::set<std::pair<std::uint32_t, std::uint32_t>> blocked;  // (country index, target)
  // (country, country): every result between their servers fails, both
  // ways (a border and its far side). Empty unless a test fills it.
  std::set<std::pair<std::uint32_t, std::uint32_t>> borders;
  // fleet_at: reports are up to this old (past stale_after_ms: many silent).
  DurationMs max_report_age_ms = 400'000;
  ObservedReport make(std::uint32_t origin, UnixMs at_ms);
  // One report per server (a few servers silent), dated in [now - 400 s, now].
  std::vector<ObservedReport> fleet_at(UnixMs now_ms);

 private:
  const WitnessPlan& plan(std::uint64_t epoch);
  std::uint32_t streak_for(std::uint32_t origin, std::uint32_t target, bool broken);

  const Roster& roster_;
  Fleet fleet_;
  std::mt19937_64& rng_;
  std::map<std::uint64_t, WitnessPlan> plans_;
};

}  // namespace mesh::verdict::testing
