// Agent: confirming a failure at once (node/agent/confirmation.h;
// docs/PROTOCOL.md, "Probes"): this node's own failures on the short
// schedule, and the probes another witness's fresh failure brings forward.
#include <utility>

#include "node/agent/agent_impl.h"
#include "node/agent/confirmation.h"
#include "node/agent/tls_turns.h"

namespace mesh::agent {

// After an outcome of `target_id` (of a probe requested at `requested_ms`)
// left `streak`: a failure short of fail_streak is confirmed on the
// streak's spacing (confirm_at_ms: a round per first failure, within the
// target's rate limit); a success, or a streak that reached
// fail_streak (the verdict's input is settled), ends the round, and the next
// probe comes at the interval.
void Agent::Impl::confirm_failure(std::string_view target_id, const verdict::TargetStreak* streak,
                                  UnixMs requested_ms, UnixMs now) {
  const Roster* roster = core_.roster();
  ScheduledTarget* target = schedule_.find(target_id);
  if (roster == nullptr || target == nullptr) return;
  const std::uint32_t threshold = roster->params.fail_streak;
  const UnixMs anchor_ms = std::exchange(target->trigger_anchor_ms, 0);  // this probe's only
  if (streak == nullptr || streak->fail_streak == 0) {
    target->confirming = false;
    target->streak_started_ms = 0;
    return;
  }
  if (streak->fail_streak == 1) target->streak_started_ms = anchored_streak_start(anchor_ms, requested_ms);
  // A streak of fail_streak that is unanswered while the target has spoken
  // since it began is pending (docs/VERDICTS.md, rule 5): no vote until a
  // probe begun after that fails. The answer to it (ProbeSchedule::hurry)
  // finds the probe in flight more often than not while confirming, so the
  // round goes on for that probe instead of leaving it to the interval.
  const bool pending = streak->fail_streak >= threshold && !streak->answered &&
                       heard_ms(target->index) >= streak->failing_since_ms;
  if (streak->fail_streak >= threshold && !pending) {
    target->confirming = false;  // settled
    return;
  }
  if (streak->fail_streak == 1) {
    target->confirming = target->confirm_rounds.take(now, kConfirmRoundPeriodMs, kConfirmRoundBurst);
    if (!target->confirming) ++counters_.confirm_rounds_refused;
    if (target->confirming) sweep_targets(*target, requested_ms, now);
  }
  // A pending streak is answered at once whatever its round: one that
  // settled as a silence claim (this node had not heard the target since
  // the streak began: cut off from the gossip, or the target's reports
  // slow to come) and then heard it would otherwise wait for its next slot,
  // and its vote with it (meshsim: 88 s for one witness of a block). It
  // costs at most kAnswersToConfirm probes per hearing: then it is answered.
  if (!target->confirming && !pending) {
    // Its round refused, a failure short of fail_streak is probed again
    // half an interval on, off its slot: a witness whose slots fall in an
    // outage that comes back every interval (a periodic firewall rule;
    // meshsim flapping-target, 20 s of every minute) failed each of them
    // and made a streak of outages no other probe saw. One probe more per
    // such failure at most, and a settled streak keeps the interval.
    if (streak->fail_streak < threshold) {
      schedule_.bring_forward(*target, now + roster->params.probe_interval_ms / 2);
    }
    return;
  }
  const UnixMs at = pending ? now + kConfirmAfterOutcomeMs
                            : confirm_at_ms(streak->fail_streak, threshold, streak_started(*target, requested_ms),
                                            requested_ms, now, roster->params.probe_interval_ms);
  schedule_.bring_forward(*target, at);
  ++counters_.confirmations;
}

// Brings this node's probe of `target` forward to now, within its rate
// limit, unless it has probed it since `since_ms`, is failing it already
// (its own round runs), has a probe in flight, or will probe it within the
// first confirmation delay anyway. True when brought forward. Unless it
// has probed it since or fails it already, a streak its next probe begins
// (brought forward, in flight or due soon anyway) counts its span from
// `anchor_ms` (0: its own start; the earliest of several; anchored_streak_start
// takes it only within 10 s before that probe began).
bool Agent::Impl::trigger_probe(ScheduledTarget* target, UnixMs since_ms, UnixMs now, UnixMs anchor_ms) {
  if (target == nullptr) return false;
  const verdict::TargetStreak* streak = ledger_.find(target->id);
  if (streak != nullptr && (streak->fail_streak > 0 || streak->last_probe_ms >= since_ms)) return false;
  if (anchor_ms != 0 && (target->trigger_anchor_ms == 0 || anchor_ms < target->trigger_anchor_ms)) {
    target->trigger_anchor_ms = anchor_ms;
  }
  if (target->in_flight != 0 || target->next_ms <= now + kConfirmSpacingMs) return false;
  if (!target->triggered.take(now, kTriggerPeriodMs, kTriggerBurst)) {
    ++counters_.triggers_refused;
    return false;
  }
  schedule_.bring_forward(*target, now);
  ++counters_.triggered_probes;
  return true;
}

// A round of confirmation began for `failing` (its first failure, probed
// at `since_ms`): this node's other targets are probed now too, each
// within its own rate limit. The verdict rules read a witness's results
// together: for the blocking country's servers (the far side of a border,
// docs/VERDICTS.md rule 6), and for all its targets (a witness cut off
// from much of the fleet is unreliable, or one side of a partition, rules
// 9 and 10). A fresh streak towards one target must not stand beside
// results for the others that are an interval old: with streaks of 18 s,
// meshsim border-partition (N = 100 in 3 countries, seed 3) made a server
// across the split unreachable at one node, whose witnesses had their
// streak towards it and not yet any failure of the other servers across,
// when only the failing target's country was swept (until 2026-12-06).
void Agent::Impl::sweep_targets(const ScheduledTarget& failing, UnixMs since_ms, UnixMs now) {
  for (ScheduledTarget& target : schedule_.targets()) {
    if (target.index != failing.index) trigger_probe(&target, since_ms, now, 0);
  }
}

// `failure`, read in a report of the server at roster index `origin`, if
// fresh and still on its way (its streak short of fail_streak):
// - its target, when it is one of this node's, is probed now: several
//   sides confirm at once. A TLS-stage failure counts from a compatriot
//   only: a TCP probe says nothing of an SNI block, and another country's
//   censor is not ours (a compatriot's TLS failure makes the probe TLS,
//   tls_turns.h);
// - its origin, when it is one of this node's targets and the failing
//   target a compatriot, is probed now: when a country blocks the origin,
//   that country's witnesses of it see their border (rule 6) as soon as
//   the origin's failures of the country's servers can count, not an
//   interval later.
void Agent::Impl::note_failure_heard(std::uint32_t origin, const ProbeResult& failure, UnixMs now) {
  const Roster* roster = core_.roster();
  const std::optional<std::uint32_t> self = core_.self_index();
  if (roster == nullptr || !self || failure.target == *self || failure.target >= roster->servers.size()) return;
  if (failure.fail_streak == 0 || failure.fail_streak >= roster->params.fail_streak) return;
  if (failure.last_probe_ms < now - roster->params.probe_interval_ms) return;
  const std::string& country = roster->servers[*self].country;
  const bool compatriot_origin = roster->servers[origin].country == country;
  const bool tls = is_tls_stage(failure.reason);
  // The failure's start anchors a streak of its target (found failing from
  // another side then), never one of the origin: its first failed probe's
  // start (unanswered_since_ms, trigger_anchor_ms).
  if (!tls || compatriot_origin) {
    trigger_probe(schedule_.find(failure.target), failure.last_probe_ms, now, trigger_anchor_ms(failure));
  }
  if (!tls && roster->servers[failure.target].country == country) {
    trigger_probe(schedule_.find(origin), failure.last_probe_ms, now, 0);
  }
}

}  // namespace mesh::agent
