// Tally: per target and observer country, how many eligible observers see it
// failing, how many are eligible, how many assigned witnesses have a result.
// Both the full evaluation and the incremental Evaluator build verdicts
// from a Tally; the Evaluator keeps one alive and applies each report's
// contribution as a delta (remove the old view, add the new), so one new
// report costs O(its view) instead of a rebuild.
#pragma once

#include <cstdint>
#include <vector>

#include "verdict/fleet.h"
#include "verdict/observed.h"
#include "verdict/witnesses.h"

namespace mesh::verdict {

// What a Tally counts against: the plan of the evaluated epoch, and during
// the grace window after a switch the previous epoch's plan too.
struct TallyContext {
  const Fleet* fleet = nullptr;
  const Parameters* params = nullptr;
  const WitnessPlan* current = nullptr;
  const WitnessPlan* previous = nullptr;  // non-null only in the grace window
};

class Tally {
 public:
  // An empty tally for `context` (assigned-witness counts come from
  // context.current). REQUIRES: every pointer but previous non-null and
  // outliving the Tally.
  explicit Tally(const TallyContext& context);

  // Adds (sign = +1) or removes (sign = -1) the votes of one observer's
  // usable view. Removal REQUIRES the same report and unreliable flag that
  // were added. A result counts for target T when the origin is T's
  // witness in the current plan, or (grace) in the previous plan.
  void contribute(int sign, const ObservedReport& observed, bool unreliable);

  std::uint32_t country_count() const { return countries_; }
  std::uint32_t eligible(std::uint32_t target, std::uint32_t country) const;
  std::uint32_t failing(std::uint32_t target, std::uint32_t country) const;
  // Current-plan witnesses of `target` in `country` with no counted result.
  std::uint32_t missing(std::uint32_t target, std::uint32_t country) const;
  std::uint32_t assigned(std::uint32_t target, std::uint32_t country) const;
  std::uint32_t discarded(std::uint32_t target) const;

 private:
  std::size_t cell(std::uint32_t target, std::uint32_t country) const {
    return static_cast<std::size_t>(target) * countries_ + country;
  }
  void count_assigned();

  TallyContext context_;
  std::uint32_t countries_ = 0;
  std::vector<std::int32_t> eligible_;  // [target][country]
  std::vector<std::int32_t> failing_;   // [target][country]
  std::vector<std::int32_t> present_;   // [target][country]: current witnesses with a result
  std::vector<std::int32_t> assigned_;  // [target][country]: current witnesses
  std::vector<std::int32_t> discarded_; // [target]
};

}  // namespace mesh::verdict
