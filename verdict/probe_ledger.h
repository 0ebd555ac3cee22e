// The probe ledger (docs/VERDICTS.md, "Probe streaks"): what one observer
// remembers of every target it probes, and the ProbeView its report carries.
// The daemon's prober and meshsim both keep their streaks here, so the two
// cannot disagree on how an outcome updates a streak, how a clock jump moves
// it, or which results a report lists.
//
// Pure: times are arguments, no I/O, no clock, no randomness. Targets are
// keyed by server id, which is stable across roster versions; roster indices
// appear only when a view is built. Not thread-safe: one owner (the
// daemon's prober strand, or one simulated node).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "common/server_id.h"
#include "common/time.h"
#include "record/report.h"
#include "record/roster.h"

namespace mesh::verdict {

// Most targets a ledger holds: a roster never names more servers, and
// retain_only() forgets those a new roster drops. At the maximum a probe of
// a new target is dropped and counted (ProbeLedger::dropped()).
inline constexpr std::size_t kProbeLedgerTargetsMax = kRosterServersMax;

// Failed probes sent after the target spoke that answer a failure streak
// that had already grown to fail_streak in silence (TargetStreak::answers);
// a streak still on its way needs one.
inline constexpr std::uint8_t kAnswersToConfirm = 2;

// One target's streaks, in the observer's clock.

struct TargetStreak {
  ServerId id;                    // the target's server id
  std::uint32_t fail_streak = 0;  // consecutive failures up to the last probe (<= kStreakMax)
  std::uint32_t ok_streak = 0;    // consecutive successes up to the last probe (<= kStreakMax)
  UnixMs last_probe_ms = 0;
  UnixMs last_ok_ms = 0;          // 0 = never succeeded
  ProbeFailure reason = ProbeFailure::none;  // why the last probe failed; none if it succeeded
  std::uint64_t probes = 0;       // outcomes recorded (>= 1); a first ok is no recovery (node/agent/tls_turns.h)
  // The present ok streak followed a failure (not a first probe, nor a
  // restart after a gap). Not stored across restarts: a restarted node
  // forgets a recovery, which only shortens its flag (ProbeResult::recovered).
  bool after_failure = false;
  // While failing (fail_streak > 0): when the streak's first failed probe
  // began (its request; after the last success, never after its outcome);
  // how many probes sent after the target spoke (since then) have
  // failed, up to kAnswersToConfirm; and whether the streak is answered
  // (sticky for the streak). 0 and false while the last probe succeeded.
  UnixMs failing_since_ms = 0;
  std::uint8_t answers = 0;
  bool answered = false;
  bool operator==(const TargetStreak&) const = default;

  // The wire form of this streak under roster index `target`.
  // Flagged recovered while an ok streak that followed a failure is at most
  // `recovered_within` probes long (0: never flagged). A failing one not
  // answered carries its failing_since_ms (ProbeResult::unanswered_since_ms).
  ProbeResult result(std::uint32_t target, std::uint32_t recovered_within = 0) const;
};

class ProbeLedger {
 public:
  // Records one probe outcome of `target_id` at `now_ms` (observer clock):
  // success sets ok_streak + 1 (saturating at kStreakMax), fail_streak 0,
  // last_ok_ms = now_ms; a failure sets fail_streak + 1 (saturating),
  // ok_streak 0 and keeps last_ok_ms; both set last_probe_ms = now_ms,
  // reason = outcome and count the probe. A target seen for the first time
  // gets an entry (no allocation once every target has one).
  // Returns the updated streak, valid until the next non-const call; or
  // nullptr when target_id is new and the ledger already holds
  // kProbeLedgerTargetsMax targets (the outcome is dropped and counted).
  // A gap restarts the streaks: when the previous probe is more than
  // `restart_after_ms` before now_ms (drivers pass the roster's
  // stale_after_ms), both streaks start again from this outcome, so a target
  // assigned again after an epoch away cannot turn one failure into a vote
  // on an old streak. last_ok_ms is kept (it is a fact, not a streak).
  // A failure that starts a streak sets failing_since_ms = started_ms (the
  // failed probe began then: a report the target signed while it was out
  // shows the target alive during the streak as well as one signed after
  // it; before, the outcome's time left such a report unheard, and a
  // compatriot witness of a block needed two more probes: meshsim's
  // detection sweep, 61 s at one start of 48); every
  // failure marks the streak answered when a report of the target the
  // observer holds was signed at or after failing_since_ms (`heard_ms`, 0:
  // none) and reached the observer (`heard_at_ms`, its clock) no later than
  // the failed probe began (`started_ms`): the target spoke since the
  // streak began, and a probe started after we heard it still could not
  // reach it. A streak that had grown to `silence_streak` failures (the
  // roster's fail_streak; 0: never) before that first answer needs a
  // second (kAnswersToConfirm): it stood through a silence, and a split
  // heals rule by rule, so the target's report can be relayed across a
  // moment before its own path opens and that one probe fails in it
  // (tests/e2e scenario 12 made verdicts of it at the heal); the next
  // probe finds the path open. A streak on its way (a censor's block seen
  // from its first failures) is answered by one. The agent passes the report it held when it sent the probe
  // (so heard_at_ms = started_ms): the latest one held at the outcome may
  // have arrived while the probe was out (a heartbeat every 2 s, a probe
  // that times out after 3.5 s: always), and never answered a streak.
  // (A report that arrives late, when a split heals, with a probe begun
  // before it arrived, confirms nothing.) started_ms < 0: now_ms;
  // heard_at_ms < 0: heard_ms.
  // REQUIRES: is_valid_server_id(target_id); outcome a ProbeFailure enumerator.
  const TargetStreak* record(std::string_view target_id, UnixMs now_ms, ProbeFailure outcome,
                             DurationMs restart_after_ms, UnixMs heard_ms = 0, UnixMs started_ms = -1,
                             UnixMs heard_at_ms = -1, std::uint32_t silence_streak = 0);

  // The streak of `target_id`, or nullptr if it was never probed (or was
  // forgotten). O(log targets). Valid until the next non-const call.
  const TargetStreak* find(std::string_view target_id) const;

  // The observer's clock jumped by delta_ms: every recorded time moves with
  // it (the daemon measures on a monotonic clock and reports wall time), so
  // a report stays consistent with its own timestamp. last_ok_ms == 0
  // ("never") stays 0, and a shifted success never lands on 0 or below.
  void shift(DurationMs delta_ms);

  // Forgets every target. The dropped() counter is kept.
  void clear() { streaks_.clear(); }

  // Puts back a streak as a restarted node stored it, replacing any held
  // for its id. False (nothing changes) when it breaks the ledger's
  // invariants: an invalid id, a reason outside ProbeFailure, streaks over
  // kStreakMax or inconsistent with the reason (fail_streak > 0 exactly
  // when reason != none, and then ok_streak == 0), failing_since_ms after
  // the last probe (or set, or answered, on an ok streak), no probe
  // counted, or a new target while the ledger is full. A gap since last_probe_ms restarts
  // the streaks at the next record(), as for any target.
  bool restore(const TargetStreak& streak);

  // Forgets every target that is not a server of `roster`, so memory stays
  // bounded by the roster. Call it whenever a new roster is installed.
  // O(targets log servers); allocates a sorted id list.
  void retain_only(const Roster& roster);

  // The view a report on `roster` carries: one ProbeResult per target in
  // `targets` (roster indices, e.g. verdict::probe_targets) that has been
  // probed, sorted by index without repeats, `self` skipped, and
  // roster_version = roster.version. Results are the streaks as they stand;
  // stale ones are the verdict's business (docs/VERDICTS.md, rule 3).
  // REQUIRES: every index in targets < roster.servers.size().
  // Results are flagged recovered, and failing ones unanswered, as
  // TargetStreak::result says, with recovered_within = the roster's fail_streak.
  ProbeView view_for(const Roster& roster, std::span<const std::uint32_t> targets,
                     std::uint32_t self) const;

  // Every target's streak, sorted by id bytes.
  std::span<const TargetStreak> streaks() const { return streaks_; }
  std::size_t size() const { return streaks_.size(); }
  // Outcomes refused because the ledger was full (since construction).
  std::uint64_t dropped() const { return dropped_; }

 private:
  std::vector<TargetStreak> streaks_;  // sorted by id, no repeats
  std::uint64_t dropped_ = 0;
};

}  // namespace mesh::verdict
