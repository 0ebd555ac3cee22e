#include "tools/meshsim/prober.h"

#include <algorithm>

namespace mesh::sim {

TargetStreak& ProberModel::streak(std::uint32_t target) {
  auto it = std::lower_bound(streaks_.begin(), streaks_.end(), target,
                             [](const TargetStreak& s, std::uint32_t t) { return s.target < t; });
  if (it == streaks_.end() || it->target != target) {
    it = streaks_.insert(it, TargetStreak{});
    it->target = target;
  }
  return *it;
}

const TargetStreak* ProberModel::find(std::uint32_t target) const {
  auto it = std::lower_bound(streaks_.begin(), streaks_.end(), target,
                             [](const TargetStreak& s, std::uint32_t t) { return s.target < t; });
  return it != streaks_.end() && it->target == target ? &*it : nullptr;
}

bool ProberModel::record(std::uint32_t target, UnixMs now_ms, ProbeFailure outcome,
                         std::uint32_t tls_every) {
  TargetStreak& s = streak(target);
  ++s.probes;
  s.last_probe_ms = now_ms;
  s.reason = outcome;
  if (outcome == ProbeFailure::none) {
    s.ok_streak = std::min(s.ok_streak + 1, kStreakMax);
    s.fail_streak = 0;
    s.last_ok_ms = now_ms;
  } else {
    s.fail_streak = std::min(s.fail_streak + 1, kStreakMax);
    s.ok_streak = 0;
  }
  return tls_every > 0 && s.probes % tls_every == 0;
}

void ProberModel::shift(DurationMs delta_ms) {
  for (TargetStreak& s : streaks_) {
    s.last_probe_ms += delta_ms;
    if (s.last_ok_ms != 0) s.last_ok_ms += delta_ms;
  }
}

}  // namespace mesh::sim
