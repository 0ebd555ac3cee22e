// The prober model of one node (docs/SIMULATOR.md, "Prober"): the streaks
// it keeps per target, as the daemon's prober would, and the bytes its
// probes cost. Targets are kept by simulator server position (stable across
// roster versions); the report maps them to roster indices.
#pragma once

#include <cstdint>
#include <vector>

#include "common/time.h"
#include "record/report.h"

namespace mesh::sim {

struct TargetStreak {
  std::uint32_t target = 0;  // position in World::servers
  std::uint32_t fail_streak = 0;
  std::uint32_t ok_streak = 0;
  UnixMs last_probe_ms = 0;  // the observer's clock
  UnixMs last_ok_ms = 0;
  ProbeFailure reason = ProbeFailure::none;
  std::uint64_t probes = 0;  // probes of this target so far (picks the TLS ones)
};

class ProberModel {
 public:
  // The streak entry of `target`, created on first use. Sorted by target.
  TargetStreak& streak(std::uint32_t target);
  const TargetStreak* find(std::uint32_t target) const;

  // Records one probe outcome at `now_ms` (observer clock); returns true
  // when it was a TLS probe (every tls_every-th probe of that target).
  bool record(std::uint32_t target, UnixMs now_ms, ProbeFailure outcome, std::uint32_t tls_every);

  // The observer's clock jumped by delta_ms: its recorded times move with it
  // (the daemon keeps them on a monotonic clock and reports them in wall time).
  void shift(DurationMs delta_ms);

  // A restarted daemon starts its streaks afresh.
  void clear() { streaks_.clear(); }

 private:
  std::vector<TargetStreak> streaks_;  // sorted by target
};

}  // namespace mesh::sim
