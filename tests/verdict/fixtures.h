// Test fixtures for the verdict engine: rosters and reports built by hand,
// and ProbeSim, a small deterministic prober that plays every server's
// probing and reporting over virtual time (used by the epoch-boundary test
// and the golden generator). The randomness of the property tests lives in
// the tests (fixed seeds), never in the library.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "record/report.h"
#include "record/roster.h"
#include "verdict/engine.h"
#include "verdict/witnesses.h"

namespace mesh::verdict::testing {

inline constexpr UnixMs kT0 = 1'700'000'000'000;  // an arbitrary start, not on an epoch boundary

// A roster of servers "<country lower>-<n>" (n from 1) in the given
// countries, `per_country[i]` servers in countries[i]; every server is on
// route "all" and on route "<country lower>".
Roster make_roster(const std::vector<std::string>& countries,
                   const std::vector<std::uint32_t>& per_country,
                   std::uint32_t witnesses_per_country = 0);

// Adds route `id` with the given server indices to `roster`.
void add_route(Roster& roster, const std::string& id, const std::vector<std::uint32_t>& servers);

// A probe result: fail_streak > 0 is a failing one (reason tcp_timeout),
// otherwise a success (ok_streak 5).
ProbeResult probe(std::uint32_t target, std::uint32_t fail_streak, UnixMs at_ms);

// A healthy report by `origin` at `at_ms`, on roster `roster_version`,
// with the given results (sorted here).
ObservedReport report(std::uint32_t origin, UnixMs at_ms, std::uint64_t roster_version,
                      std::vector<ProbeResult> results = {});

// The same, with one result per target in `targets` and the failing
// streak `fail_streak_of(target)`.
ObservedReport report_probing(std::uint32_t origin, UnixMs at_ms, std::uint64_t roster_version,
                              const std::vector<std::uint32_t>& targets,
                              const std::function<std::uint32_t(std::uint32_t)>& fail_streak_of);

// Plays probes and reports of every powered server over virtual time:
// each probe_interval every powered server probes exactly probe_targets()
// (reachable() decides the outcome; a powered-off target is unreachable),
// and each heartbeat_interval it reports its view to the Evaluator.
class ProbeSim {
 public:
  explicit ProbeSim(Roster roster);

  // reachable(observer, target): true when observer's probe of target succeeds.
  std::function<bool(std::uint32_t, std::uint32_t)> reachable = [](std::uint32_t, std::uint32_t) {
    return true;
  };
  std::vector<bool> powered;    // per server; off: no probes, no reports, unreachable
  std::vector<bool> listener_ok;
  bool warm_up = true;  // false: probe only current-epoch targets (counterfactual tests)

  // Advances to `until_ms`, probing and reporting at every tick on the way.
  void run_until(UnixMs until_ms, Evaluator& evaluator);
  // Every report the simulated fleet has published, in order.
  const std::vector<ObservedReport>& published() const { return published_; }
  const Roster& roster() const { return roster_; }

 private:
  struct Streak {
    std::uint32_t fail = 0;
    std::uint32_t ok = 0;
    UnixMs last_probe_ms = 0;
    UnixMs last_ok_ms = 0;
  };
  const WitnessPlan& plan(std::uint64_t epoch);
  void probe_round(UnixMs now_ms);
  ObservedReport make_report(std::uint32_t origin, UnixMs now_ms) const;

  Roster roster_;
  Fleet fleet_;
  std::map<std::uint64_t, WitnessPlan> plans_;
  std::vector<std::map<std::uint32_t, Streak>> views_;  // per observer, by target
  std::vector<ObservedReport> published_;
  UnixMs now_ms_ = kT0;
};

}  // namespace mesh::verdict::testing
