// Confirming a failure at once (docs/PROTOCOL.md, "Probes"; issue 37). A
// witness whose probe of a target fails does not wait an interval for its
// next one: it probes again 1 s after the failure (5 s after the failed
// probe began at least), then 15 s after the first began, until the
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
#include <cstdint>
#include <limits>

#include "common/time.h"
#include "record/report.h"

namespace mesh::agent {

// A streak's probes (docs/VERDICTS.md, "Probe streaks"): each starts at
// least kConfirmSpacingMs after the one before began and
// kConfirmAfterOutcomeMs after its outcome, and the one that can complete
// the streak (the fail_streak-th, and any after it) at least kStreakSpanMs
// after the streak's first began. Spread, not back to back: a probe that
// gets no answer sent its SYN at 0, 1 and 3 s (the prober's 3.5 s deadline),
// so a streak of 3 needs the path silent from its first probe's start to
// 18 s later at least; a network blink (seconds), or an outage of 15 s
// every minute (meshsim flapping-target), cannot make one. 15 s, not the
// 20 s it was until 2026-12-06: with three witnesses per country probing
// 20 s apart, an IP block's worst case is that slot gap + the span + the
// last probe's deadline + a gossip hop, 48 s at 20 and 43 at 15 (issue
// 37's bound is 45).
inline constexpr DurationMs kConfirmSpacingMs = 5'000;
inline constexpr DurationMs kStreakSpanMs = 15'000;
inline constexpr DurationMs kConfirmAfterOutcomeMs = 1'000;

// A streak begun by a probe that another witness's fresh failure brought
// forward, or found in flight or due within kConfirmSpacingMs anyway
// (Agent's trigger_probe), counts its span from when that failure began as
// far as the report says (trigger_anchor_ms), not from its own first probe: the target was found failing then, and the streak's last
// probe still starts kStreakSpanMs after it, so an outage shorter than the
// span (meshsim flapping-target) cannot complete it any more than the
// first witness's own. Only from an anchor at most kTriggerAnchorMaxMs
// before the probe began (a triggered probe leaves within seconds; an
// older or a future time, another node's clock, is not used), so the
// streak's own probes still span at least kStreakSpanMs -
// kTriggerAnchorMaxMs. It saves a triggered witness the delay of the news
// (the first failure's deadline and a gossip hop, about 6 s) on every
// confirmed failure.
inline constexpr DurationMs kTriggerAnchorMaxMs = 10'000;

// When another witness's failure `failure` (its report's result) began, as
// its report says: its streak's first failed probe's start
// (unanswered_since_ms; 0 when answered or none: no anchor).
inline UnixMs trigger_anchor_ms(const ProbeResult& failure) { return failure.unanswered_since_ms; }

// When the streak begun by a probe requested at `requested_ms` counts its
// span from, that probe brought forward by a failure begun at `anchor_ms`
// (0: none).
inline UnixMs anchored_streak_start(UnixMs anchor_ms, UnixMs requested_ms) {
  if (anchor_ms == 0 || anchor_ms > requested_ms || requested_ms - anchor_ms > kTriggerAnchorMaxMs) {
    return requested_ms;
  }
  return anchor_ms;
}

// The earliest start of the probe after the `fail_streak`-th failure of a
// streak whose first probe was requested at `streak_started_ms` and whose
// last at `requested_ms`, under the roster's `threshold` (fail_streak).
// REQUIRES: fail_streak >= 1.
inline UnixMs confirm_spacing_ms(std::uint32_t fail_streak, std::uint32_t threshold, UnixMs streak_started_ms,
                                 UnixMs requested_ms) {
  UnixMs at = requested_ms + kConfirmSpacingMs;
  if (fail_streak + 1 >= threshold) at = std::max(at, streak_started_ms + kStreakSpanMs);
  return at;
}

// When the next probe is due after that failure, whose outcome came back
// at `now`: the spacing above, and never later than one probe interval
// from now.
inline UnixMs confirm_at_ms(std::uint32_t fail_streak, std::uint32_t threshold, UnixMs streak_started_ms,
                            UnixMs requested_ms, UnixMs now, DurationMs probe_interval_ms) {
  const UnixMs at = std::max(confirm_spacing_ms(fail_streak, threshold, streak_started_ms, requested_ms),
                             now + kConfirmAfterOutcomeMs);
  return std::min(at, now + probe_interval_ms);
}

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

// Refutations of silence claims against this node (Agent's
// publish_refutation; docs/PROTOCOL.md, "When a node reports"): at most one
// per this long (or per change gap, when that is shorter). A witness's
// confirmation comes 5 s after its failed probe began: the claims of the
// witnesses a first failure brought forward are refuted by then.
inline constexpr DurationMs kRefutationGapMs = 5'000;
// Reports of first failures leave past the change gap at most this often:
// a mass block turns a node's targets country by country within seconds
// (a first failure sweeps its country), and the blocking country's
// failures are the border that explains the far side's votes (docs/
// VERDICTS.md rule 6), so they must not wait for the gap while those votes
// do not (meshsim mass-block-80, N = 30, seed 3: 29 false verdicts).
inline constexpr DurationMs kFirstFailureGapMs = 5'000;

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
