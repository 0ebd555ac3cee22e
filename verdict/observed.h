// The engine's input: one decoded report as held for its origin, and the
// per-report facts every rule reads (freshness, which probe results count,
// whether the observer is unreliable). docs/VERDICTS.md states each rule.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "common/time.h"
#include "record/report.h"
#include "record/roster.h"

namespace mesh::verdict {

struct ObservedReport {
  std::uint32_t origin = 0;  // the reporter's index in the roster
  UnixMs timestamp_ms = 0;   // the report record's timestamp
  Report report;
  bool operator==(const ObservedReport&) const = default;
};

// True when `candidate` replaces `held` as its origin's latest report: a
// later timestamp, or the same timestamp and a report that is greater in
// the field-by-field order of report_less (any total order would do; this
// one is documented so every node picks the same).
bool supersedes(const ObservedReport& candidate, const ObservedReport& held);
// Strict weak order over report contents: self-check, metrics, view.
bool report_less(const Report& a, const Report& b);

// A report is fresh while now_ms - timestamp_ms <= the roster's stale_after
// scaled for its size (record/fleet_scale.h, effective_stale_after_ms; a
// report dated ahead of now is fresh).
bool is_fresh(const ObservedReport& observed, UnixMs now_ms, const Roster& roster);

// Its view is usable (its votes count) when it is fresh and its view is on
// the roster being evaluated; a view on another roster version names
// targets by another numbering, so it is treated as no view at all.
bool view_usable(const ObservedReport& observed, UnixMs now_ms, const Roster& roster);

// Calls visit(const ProbeResult&) for every result of the view that counts:
// a target inside the roster, not the origin itself, in strictly increasing
// target order (a repeat or an out-of-order entry is skipped; the decoder
// already refuses them), probed no earlier than stale_after_ms before the
// report's own timestamp (a target the observer stopped probing).
inline constexpr std::size_t kResultsPrefetched = 16;

// The oldest probe time a result of `observed` may have and still count.
inline UnixMs oldest_counted_probe_ms(const ObservedReport& observed, const Parameters& params) {
  // Saturating: an absurdly old record timestamp must not overflow.
  const UnixMs floor_ms = std::numeric_limits<UnixMs>::min() + params.stale_after_ms;
  return observed.timestamp_ms < floor_ms ? std::numeric_limits<UnixMs>::min()
                                          : observed.timestamp_ms - params.stale_after_ms;
}

template <class Visit>
void for_each_counted_result(const ObservedReport& observed, const Parameters& params,
                             std::uint32_t server_count, Visit&& visit) {
  std::int64_t previous = -1;
  const UnixMs oldest_probe_ms = oldest_counted_probe_ms(observed, params);
  const std::vector<ProbeResult>& results = observed.report.view.results;
  const std::size_t count = results.size();
  for (std::size_t i = 0; i < count; ++i) {
    // A full-mesh fleet's views are far larger than the caches: ask for
    // the lines a few results ahead (a hint; no effect on the results).
    if (i + kResultsPrefetched < count) __builtin_prefetch(&results[i + kResultsPrefetched]);
    const ProbeResult& result = results[i];
    if (result.target >= server_count || result.target == observed.origin) continue;
    if (static_cast<std::int64_t>(result.target) <= previous) continue;
    previous = result.target;
    if (result.last_probe_ms < oldest_probe_ms) continue;
    visit(result);
  }
}

// The result of `observed` for `target` that for_each_counted_result
// would visit, or nullptr. O(log view), by the view's order: sorted by
// target, no repeats (the decoder refuses any other view; on one it would
// refuse, which result this finds is unspecified).
inline const ProbeResult* counted_result(const ObservedReport& observed, const Parameters& params,
                                         std::uint32_t server_count, std::uint32_t target) {
  if (target >= server_count || target == observed.origin) return nullptr;
  const std::vector<ProbeResult>& results = observed.report.view.results;
  const auto it = std::lower_bound(results.begin(), results.end(), target,
                                   [](const ProbeResult& r, std::uint32_t t) { return r.target < t; });
  if (it == results.end() || it->target != target) return nullptr;
  return it->last_probe_ms < oldest_counted_probe_ms(observed, params) ? nullptr : &*it;
}

// A result's failure streak is at least fail_streak.
inline bool is_failing(const ProbeResult& result, const Parameters& params) {
  return result.fail_streak >= params.fail_streak;
}

// An unanswered failure (ProbeResult::unanswered_since_ms) is a *silence
// claim* that holds at the evaluating node while nothing the target signed
// since the streak began is held here (`target_heard_ms`: the timestamp of
// the target's latest report held, 0: none): the target is silent to us
// too. Otherwise the failure is *pending*: the target spoke, and no probe
// has failed since.
inline bool silence_holds(const ProbeResult& result, UnixMs target_heard_ms) {
  return result.fail_streak > 0 && result.unanswered_since_ms != 0 && target_heard_ms < result.unanswered_since_ms;
}

// A result votes "can't reach" (docs/VERDICTS.md, rule 5) when its streak
// is failing and it is answered (the target spoke since the streak began,
// and still could not be reached), or its silence claim holds (powered
// off, or cut off with its side of a split: the partition rule tells those
// apart). A pending one has not been confirmed against a living target and
// is on its way, like a shorter streak.
inline bool is_vote(const ProbeResult& result, const Parameters& params, UnixMs target_heard_ms) {
  return is_failing(result, params) &&
         (result.unanswered_since_ms == 0 || silence_holds(result, target_heard_ms));
}

// Of the counted results of its view, at least unreliable_min_targets, and
// those with a failure streak (of any length: failing or on its way) or
// flagged recovered reach `permille` (integer: streaks * 1000 >= permille
// * probed). Depends on the report only. With unreliable_fraction_permille
// / 2 it picks the observers judge_witnesses examines (verdict/borders.h):
// only failures no border explains make an observer unreliable or strained.
bool fails_share(const ObservedReport& observed, const Parameters& params,
                 std::uint32_t server_count, std::uint32_t permille);

// What fails_share reads, counted by a pass that visits the view anyway
// (Tally::contribute): counted results, and those with a streak or recovered.
struct ViewShare {
  std::uint64_t probed = 0;
  std::uint64_t failing = 0;
  void count(const ProbeResult& result) {
    ++probed;
    if (result.fail_streak > 0 || result.recovered) ++failing;
  }
  // fails_share's answer from these counts.
  bool reaches(const Parameters& params, std::uint32_t permille) const {
    if (probed < params.unreliable_min_targets || probed == 0) return false;
    return failing * 1000 >= std::uint64_t{permille} * probed;
  }
};

}  // namespace mesh::verdict
