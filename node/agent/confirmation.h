// Confirming a failure at once (docs/PROTOCOL.md, "Probes"; issue 37). A
// witness whose probe of a target fails does not wait an interval for its
// next one: it probes again 5 s, then 10 s after the failed probe began (1 s
// after an unanswered one's 10 s deadline) until the
// streak reaches fail_streak (the verdict's input is settled) or a probe
// gets through. Its first failure is news (published at once), and the
// target's other witnesses that read it probe the target at once too
// (SWIM's indirect probe, Lifeguard's suspicion, with per-country
// evidence). Both are bounded per target: a target that fails for one
// observer only (a flaky link) cannot make the fleet probe it every few
// seconds for an hour. Every probe, confirmation or not, is charged to the
// daily volume cap as any other. Pure: times are arguments.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>

#include "common/time.h"

namespace mesh::agent {

// After the k-th failure of a streak, the next probe starts this long after
// the failed one started (the last entry for any later one), and at least
// kConfirmAfterOutcomeMs after its outcome. Spread, not back to back: a
// streak of 3 spans at least 15 s of probe starts, and where the probes go
// unanswered (an IP block, a power-off) each waits out the prober's 10 s
// deadline, so three of them span 32 s of silence; a network blink
// (seconds) cannot make one (docs/VERDICTS.md, "Probe streaks").
inline constexpr std::array<DurationMs, 3> kConfirmDelaysMs = {5'000, 10'000, 20'000};
inline constexpr DurationMs kConfirmAfterOutcomeMs = 1'000;

// Rounds of confirmation (a streak's first failure starts one) per target:
// at most kConfirmRoundBurst at once and one per kConfirmRoundPeriodMs on
// average; past that a failure is confirmed at the probe interval, as
// before. A target flapping at every probe costs its witness at most
// 2 x 6 extra probes an hour.
inline constexpr DurationMs kConfirmRoundPeriodMs = 600'000;
inline constexpr std::uint32_t kConfirmRoundBurst = 3;

// Probes brought forward by another witness's failure, per target: at most
// kTriggerBurst at once and one per kTriggerPeriodMs on average. A target
// one observer keeps failing costs each other witness at most about 7
// extra probes an hour.
inline constexpr DurationMs kTriggerPeriodMs = 600'000;
inline constexpr std::uint32_t kTriggerBurst = 2;

// The spacing after the `fail_streak`-th failure of a streak: the next
// probe starts no sooner than this after the failed one started.
// REQUIRES: fail_streak >= 1.
inline DurationMs confirm_delay_ms(std::uint32_t fail_streak) {
  return kConfirmDelaysMs[std::min<std::size_t>(fail_streak - 1, kConfirmDelaysMs.size() - 1)];
}

// When the next probe is due after the `fail_streak`-th failure of a
// streak, whose probe was requested at `requested_ms` and came back at
// `now`: never later than one probe interval from now.
// REQUIRES: fail_streak >= 1.
inline UnixMs confirm_at_ms(std::uint32_t fail_streak, UnixMs requested_ms, UnixMs now,
                            DurationMs probe_interval_ms) {
  const UnixMs at = std::max(requested_ms + confirm_delay_ms(fail_streak), now + kConfirmAfterOutcomeMs);
  return std::min(at, now + probe_interval_ms);
}

// Refutations of silence claims against this node (Agent's
// publish_refutation; docs/PROTOCOL.md, "When a node reports"): at most one
// per this long (or per change gap, when that is shorter). A witness's
// confirmation comes 5 s after its failed probe began: the claims of the
// witnesses a first failure brought forward are refuted by then.
inline constexpr DurationMs kRefutationGapMs = 5'000;

// A rate limit (the generic cell rate algorithm): take() allows at most
// `burst` events at once and one per `period_ms` on average. One time value,
// so it costs a target 8 bytes.
struct RateLimit {
  UnixMs theoretical_ms = std::numeric_limits<UnixMs>::min();  // the bucket is full

  // True (and counted) when an event at `now` is allowed.
  // REQUIRES: period_ms > 0, burst >= 1.
  bool take(UnixMs now, DurationMs period_ms, std::uint32_t burst) {
    const UnixMs from = std::max(theoretical_ms, now);
    if (from - now > static_cast<DurationMs>(burst - 1) * period_ms) return false;
    theoretical_ms = from + period_ms;
    return true;
  }
  // The clock jumped by `delta_ms`.
  void shift(DurationMs delta_ms) {
    if (theoretical_ms != std::numeric_limits<UnixMs>::min()) theoretical_ms += delta_ms;
  }
};

}  // namespace mesh::agent
