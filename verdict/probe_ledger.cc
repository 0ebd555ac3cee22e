#include "verdict/probe_ledger.h"

#include <algorithm>
#include <limits>

#include "common/check.h"

namespace mesh::verdict {
namespace {

bool id_less(const TargetStreak& streak, std::string_view id) {
  return std::string_view(streak.id) < id;
}

void apply_outcome(TargetStreak& streak, UnixMs now_ms, ProbeFailure outcome, UnixMs heard_ms,
                   UnixMs started_ms, UnixMs heard_at_ms, std::uint32_t silence_streak) {
  ++streak.probes;
  streak.last_probe_ms = now_ms;
  streak.reason = outcome;
  if (outcome == ProbeFailure::none) {
    if (streak.fail_streak > 0) streak.after_failure = true;
    streak.ok_streak = std::min(streak.ok_streak + 1, kStreakMax);
    streak.fail_streak = 0;
    streak.last_ok_ms = now_ms;
    streak.failing_since_ms = 0;
    streak.answers = 0;
    streak.answered = false;
  } else {
    if (streak.fail_streak == 0) {
      // The streak began when its first failed probe began: a report the
      // target signed while that probe was out already answers it. After
      // the success before it, and never after this outcome.
      const UnixMs after_ok = streak.last_ok_ms != 0 ? streak.last_ok_ms + 1 : started_ms;
      streak.failing_since_ms = std::min(std::max(started_ms, after_ok), now_ms);
      streak.answers = 0;
      streak.answered = false;
    }
    const std::uint32_t before = streak.fail_streak;
    streak.fail_streak = std::min(streak.fail_streak + 1, kStreakMax);
    streak.ok_streak = 0;
    streak.after_failure = false;
    if (heard_ms != 0 && heard_ms >= streak.failing_since_ms && heard_at_ms <= started_ms && !streak.answered) {
      const bool stood_silent = silence_streak > 0 && before >= silence_streak;
      streak.answered = ++streak.answers == kAnswersToConfirm || !stood_silent;
      if (streak.answered) streak.answers = kAnswersToConfirm;  // one form of "answered" (stored as such)
    }
  }
}

// time + delta, saturating at the ends of UnixMs (a wild jump must not
// overflow into undefined behaviour).
UnixMs shifted(UnixMs time, DurationMs delta) {
  constexpr UnixMs kMax = std::numeric_limits<UnixMs>::max();
  constexpr UnixMs kMin = std::numeric_limits<UnixMs>::min();
  if (delta > 0 && time > kMax - delta) return kMax;
  if (delta < 0 && time < kMin - delta) return kMin;
  return time + delta;
}

}  // namespace

ProbeResult TargetStreak::result(std::uint32_t target, std::uint32_t recovered_within) const {
  const bool recovered = fail_streak == 0 && after_failure && ok_streak <= recovered_within;
  const UnixMs unanswered_since = fail_streak > 0 && !answered ? failing_since_ms : 0;
  return ProbeResult{target, fail_streak, ok_streak, last_probe_ms, last_ok_ms, reason, recovered, unanswered_since};
}

const TargetStreak* ProbeLedger::record(std::string_view target_id, UnixMs now_ms,
                                        ProbeFailure outcome, DurationMs restart_after_ms,
                                        UnixMs heard_ms, UnixMs started_ms, UnixMs heard_at_ms,
                                        std::uint32_t silence_streak) {
  MESH_CHECK(is_valid_server_id(target_id), "probe ledger: target id breaks the id rule");
  MESH_CHECK(static_cast<std::uint8_t>(outcome) <= kProbeFailureMax,
             "probe ledger: outcome is not a ProbeFailure");
  auto it = std::lower_bound(streaks_.begin(), streaks_.end(), target_id, id_less);
  if (it == streaks_.end() || it->id != target_id) {
    if (streaks_.size() >= kProbeLedgerTargetsMax) {
      ++dropped_;
      return nullptr;
    }
    it = streaks_.insert(it, TargetStreak{});
    it->id = ServerId(target_id);
  }
  if (it->probes > 0 && now_ms - it->last_probe_ms > restart_after_ms) {
    it->fail_streak = 0;  // a gap: the next outcome starts both streaks afresh
    it->ok_streak = 0;
    it->after_failure = false;
  }
  apply_outcome(*it, now_ms, outcome, heard_ms, started_ms < 0 ? now_ms : started_ms,
                heard_at_ms < 0 ? heard_ms : heard_at_ms, silence_streak);
  return &*it;
}

bool ProbeLedger::restore(const TargetStreak& streak) {
  const bool failed = streak.reason != ProbeFailure::none;
  const bool consistent =
      failed ? streak.fail_streak > 0 && streak.ok_streak == 0 && streak.failing_since_ms <= streak.last_probe_ms &&
                   streak.answers <= kAnswersToConfirm && streak.answered == (streak.answers == kAnswersToConfirm)
             : streak.fail_streak == 0 && streak.ok_streak > 0 && streak.failing_since_ms == 0 && !streak.answered &&
                   streak.answers == 0;
  if (!is_valid_server_id(streak.id) || static_cast<std::uint8_t>(streak.reason) > kProbeFailureMax ||
      streak.fail_streak > kStreakMax || streak.ok_streak > kStreakMax || !consistent ||
      streak.probes == 0 || streak.last_ok_ms < 0) {
    return false;
  }
  auto it = std::lower_bound(streaks_.begin(), streaks_.end(), std::string_view(streak.id), id_less);
  if (it != streaks_.end() && it->id == streak.id) {
    *it = streak;
    return true;
  }
  if (streaks_.size() >= kProbeLedgerTargetsMax) return false;
  streaks_.insert(it, streak);
  return true;
}

const TargetStreak* ProbeLedger::find(std::string_view target_id) const {
  auto it = std::lower_bound(streaks_.begin(), streaks_.end(), target_id, id_less);
  return it != streaks_.end() && it->id == target_id ? &*it : nullptr;
}

void ProbeLedger::shift(DurationMs delta_ms) {
  for (TargetStreak& streak : streaks_) {
    streak.last_probe_ms = shifted(streak.last_probe_ms, delta_ms);
    if (streak.fail_streak > 0) streak.failing_since_ms = shifted(streak.failing_since_ms, delta_ms);
    if (streak.last_ok_ms == 0) continue;  // never succeeded: stays "never"
    streak.last_ok_ms = std::max<UnixMs>(shifted(streak.last_ok_ms, delta_ms), 1);
  }
}

void ProbeLedger::retain_only(const Roster& roster) {
  std::vector<std::string_view> members;
  members.reserve(roster.servers.size());
  for (const ServerEntry& server : roster.servers) members.emplace_back(server.id);
  std::sort(members.begin(), members.end());
  std::erase_if(streaks_, [&](const TargetStreak& streak) {
    return !std::binary_search(members.begin(), members.end(), std::string_view(streak.id));
  });
}

ProbeView ProbeLedger::view_for(const Roster& roster, std::span<const std::uint32_t> targets,
                                std::uint32_t self) const {
  ProbeView view;
  view.roster_version = roster.version;
  view.results.reserve(targets.size());
  for (std::uint32_t target : targets) {
    MESH_CHECK(target < roster.servers.size(), "probe ledger: target index outside the roster");
    if (target == self) continue;
    const TargetStreak* streak = find(roster.servers[target].id);
    if (streak == nullptr) continue;  // never probed: nothing to report yet
    view.results.push_back(streak->result(target, roster.params.fail_streak));
  }
  // Callers pass sorted targets (probe_targets does); sorting here keeps the
  // view's invariant (sorted, no repeats) whatever they pass.
  auto by_target = [](const ProbeResult& a, const ProbeResult& b) { return a.target < b.target; };
  std::sort(view.results.begin(), view.results.end(), by_target);
  auto same_target = [](const ProbeResult& a, const ProbeResult& b) { return a.target == b.target; };
  view.results.erase(std::unique(view.results.begin(), view.results.end(), same_target),
                     view.results.end());
  return view;
}

}  // namespace mesh::verdict
