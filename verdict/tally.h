// Tally: the raw evidence per target and observer country: how many
// witnesses hold a counted result, how many of them fail it; per target,
// which observers have a streak against it. Nothing here is judged yet: which observers are
// unreliable and which failures are the far side of a border are decided
// from the whole tally by judge_witnesses (verdict/borders.h). The
// incremental Evaluator keeps one Tally alive and applies each report's
// contribution as a delta (remove the old view, add the new), so one new
// report costs O(its view) instead of a rebuild.
#pragma once

#include <cstdint>
#include <vector>

#include "common/check.h"
#include "verdict/fleet.h"
#include "verdict/observed.h"
#include "verdict/view_digest.h"
#include "verdict/witnesses.h"

namespace mesh::verdict {

// What a Tally counts against: the plan of the evaluated epoch, and during
// the grace window after a switch the previous epoch's plan too.
struct TallyContext {
  const Fleet* fleet = nullptr;
  const Parameters* params = nullptr;
  const WitnessPlan* current = nullptr;
  const WitnessPlan* previous = nullptr;  // non-null only in the grace window
  // By server: the timestamp of its latest report held (0: none), which a
  // silent claim is judged against (silence_holds). The owner changes an
  // entry only with the claims against that server taken out of the tally
  // (Tally::silent_claimants).
  const std::vector<UnixMs>* heard_ms = nullptr;
};

// Calls visit(target, current, const ProbeResult&) for every counted result
// of `observed` whose origin is the target's witness in the current plan
// (current = true) or, in the grace window, in the previous plan.
template <class Visit>
void for_each_witness_result(const TallyContext& context, const ObservedReport& observed,
                             Visit&& visit) {
  const std::uint32_t origin = observed.origin;
  for_each_counted_result(observed, *context.params, context.fleet->server_count,
                          [&](const ProbeResult& result) {
                            bool current = context.current->is_witness(origin, result.target);
                            bool grace = !current && context.previous != nullptr &&
                                         context.previous->is_witness(origin, result.target);
                            if (current || grace) {
                              visit(result.target, current, result);
                            }
                          });
}

class Tally {
 public:
  // An empty tally for `context` (assigned-witness counts come from
  // context.current). REQUIRES: every pointer but previous non-null and
  // outliving the Tally.
  explicit Tally(const TallyContext& context);

  // Adds (sign = +1) or removes (sign = -1) the results of one observer's
  // usable view, as its digest (digest_view against this tally's roster)
  // holds them. Removal REQUIRES the digest that was added. With `share`,
  // also counts into it the view's share of streaks (ViewShare, as
  // fails_share reads it).
  void contribute(int sign, const ViewDigest& digest, ViewShare* share = nullptr);

  const TallyContext& context() const { return context_; }
  std::uint32_t country_count() const { return countries_; }
  // Witnesses (current or grace) of `target` in `country` with a counted
  // result; how many of those results fail (streak >= fail_streak), and how
  // many succeed (streak 0: the last probe got through). A result between
  // the two (on its way to failing, or pending: is_vote) is neither.
  // Inline: the judgement reads them for every (target, country) cell.
  std::uint32_t reporting(std::uint32_t target, std::uint32_t country) const {
    return non_negative(reporting_[cell(target, country)]);
  }
  std::uint32_t failing(std::uint32_t target, std::uint32_t country) const {
    return non_negative(failing_[cell(target, country)]);
  }
  std::uint32_t succeeding(std::uint32_t target, std::uint32_t country) const {
    return non_negative(succeeding_[cell(target, country)]);
  }
  // Of the succeeding results, those flagged recovered (ProbeResult::recovered).
  std::uint32_t recovering(std::uint32_t target, std::uint32_t country) const {
    return non_negative(recovering_[cell(target, country)]);
  }
  // Current-plan witnesses of `target` in `country`, and those of them with
  // no counted result.
  std::uint32_t assigned(std::uint32_t target, std::uint32_t country) const {
    return non_negative(assigned_[cell(target, country)]);
  }
  std::uint32_t missing(std::uint32_t target, std::uint32_t country) const {
    const std::int32_t missing = assigned_[cell(target, country)] - present_[cell(target, country)];
    MESH_CHECK(missing >= 0, "more present witnesses than assigned");
    return static_cast<std::uint32_t>(missing);
  }
  // The reporting, failing and succeeding counts of every cell, [country][target]
  // flat (the judgement starts from copies of them).
  const std::vector<std::int32_t>& reporting_cells() const { return reporting_; }
  const std::vector<std::int32_t>& failing_cells() const { return failing_; }
  const std::vector<std::int32_t>& succeeding_cells() const { return succeeding_; }
  // Results with a failure streak (any length) whose silence claim holds
  // (silence_holds): the target has been silent to them, and to us.
  std::uint32_t silent_claims(std::uint32_t target) const { return non_negative(silent_claims_[target]); }
  // The observers whose counted result for `target` is an unanswered
  // failure (a silence claim, held or not), in no set order: those to take
  // out and put back when the target's latest report changes.
  const std::vector<std::uint32_t>& silent_claimants(std::uint32_t target) const {
    return silent_claimants_[target];
  }
  // The observers whose counted result for `target` has a failure streak
  // (any length, answered or not), in no set order.
  const std::vector<std::uint32_t>& streak_observers(std::uint32_t target) const {
    return streak_observers_[target];
  }
  // Of `observer`'s counted witness results for servers of `country`, those
  // that get through and are not flagged recovered: 0 means the observer
  // reaches none of that country's servers it probes (cut off from it, or
  // only just back).
  std::uint32_t through(std::uint32_t observer, std::uint32_t country) const {
    return non_negative(through_[static_cast<std::size_t>(observer) * countries_ + country]);
  }
  // Whether `result` is a vote here (is_vote, against the heard_ms of the context).
  bool votes(const ProbeResult& result) const;
  // Whether its silence claim holds here (silence_holds).
  bool silence_held(const ProbeResult& result) const;

 private:
  static std::uint32_t non_negative(std::int32_t count) {
    MESH_CHECK(count >= 0, "tally count below zero: a removal without its addition");
    return static_cast<std::uint32_t>(count);
  }
  // Cells are [country][target]: an observer's view (one country, its
  // targets in order) adds to each array in order, not a cache line per
  // result and array as [target][country] did (issue 41: the full
  // evaluation at 3000 servers).
  std::size_t cell(std::uint32_t target, std::uint32_t country) const {
    return static_cast<std::size_t>(country) * servers_ + target;
  }
  void count_assigned();

  TallyContext context_;
  std::uint32_t countries_ = 0;
  std::uint32_t servers_ = 0;
  std::vector<std::int32_t> reporting_;  // [country][target], as every cell array
  std::vector<std::int32_t> failing_;
  std::vector<std::int32_t> succeeding_;
  std::vector<std::int32_t> recovering_;
  std::vector<std::int32_t> present_;    // current witnesses with a result
  std::vector<std::int32_t> assigned_;   // current witnesses
  std::vector<std::vector<std::uint32_t>> streak_observers_;     // [target]
  std::vector<std::int32_t> through_;                            // [observer][country]
  std::vector<std::int32_t> silent_claims_;                      // [target]
  std::vector<std::vector<std::uint32_t>> silent_claimants_;     // [target]
};

}  // namespace mesh::verdict
