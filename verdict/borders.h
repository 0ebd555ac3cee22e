// Borders and the judgement of witnesses (docs/VERDICTS.md, rules 5-7):
// from the raw Tally, which observers are unreliable, which failing results
// are the far side of a country's border, and what is left to vote.
//
// A country C *fails* a server T when at least two of C's witnesses of T
// fail it and none of them succeeds: the country as a whole cannot reach T,
// which is what a censor's block looks like from inside. When T is abroad,
// that is a border, and it is never held against the observers (they are
// not unreliable for it). Its far side is T's own failures to reach C's
// servers: when T's country *holds against* an observer O (at least two of
// its witness results for O have a failure streak, of any length, or got
// through only lately (flagged recovered), and no other gets through: a
// border on its way, standing or just lifted), O's failing result for T is
// *explained* (set aside, not a vote), provided T's country holds against
// at least as many servers abroad as O's does (its *breadth*); the broader
// border is the censor's. Failing a server that no witness anywhere gets through to (it
// is down) is held against nobody. An observer is unreliable when the rest
// of its failures, those its own country does not share, reach the
// unreliable fraction (a far side does not excuse them: a server whose own
// network is broken looks, from each country, like a server that country
// blocks, and only its compatriots tell the two apart). The far side and a
// confirmed border read a success no newer than a compatriot's last success
// before its failure streak (*outdated*) as no result: it predates what
// the streak shows (judge_witnesses).
#pragma once

#include <cstdint>
#include <vector>

#include "verdict/observed.h"
#include "verdict/tally.h"

namespace mesh::verdict {

class WitnessJudgement {
 public:
  std::uint32_t eligible(std::uint32_t target, std::uint32_t country) const {
    return static_cast<std::uint32_t>(eligible_[cell(target, country)]);
  }
  std::uint32_t failing(std::uint32_t target, std::uint32_t country) const {
    return static_cast<std::uint32_t>(failing_[cell(target, country)]);
  }
  std::uint32_t succeeding(std::uint32_t target, std::uint32_t country) const {
    return static_cast<std::uint32_t>(succeeding_[cell(target, country)]);
  }
  std::uint32_t discarded(std::uint32_t target) const { return discarded_[target]; }
  std::uint32_t explained(std::uint32_t target) const { return explained_[target]; }
  bool unreliable(std::uint32_t observer) const { return unreliable_[observer]; }
  // Many observers at once fail their targets on their own account (no
  // border explains it): the fleet's own network is split, and no side's
  // failures make a verdict.
  bool partitioned() const { return partitioned_; }
  // Silent to us (at least two silence claims hold against it) and yet
  // reached by an observer not so claimed, by a probe made after the
  // earliest of those claims began:
  // the target is alive and only its reports have not reached us yet (a
  // split healing, its side's reports landing one by one). Its holding
  // claims are no verdict: insufficient evidence (cut_off_count).
  bool alive_unheard(std::uint32_t target) const { return !alive_unheard_.empty() && alive_unheard_[target]; }
  // Servers outside `country` that it holds against.
  std::uint32_t breadth(std::uint32_t country) const { return breadth_[country]; }

 private:
  friend WitnessJudgement judge_witnesses(const Tally&, const std::vector<const ObservedReport*>&,
                                          const std::vector<bool>&);
  // The Tally's layout (Tally::cell): [country][target].
  std::size_t cell(std::uint32_t target, std::uint32_t country) const {
    return static_cast<std::size_t>(country) * servers_ + target;
  }
  std::uint32_t servers_ = 0;
  std::vector<std::int32_t> eligible_;    // [country][target]
  std::vector<std::int32_t> failing_;     // [country][target]
  std::vector<std::int32_t> succeeding_;  // [country][target]
  std::vector<std::uint32_t> discarded_;  // [target]: results of unreliable observers
  std::vector<std::uint32_t> explained_;  // [target]: far-side failures set aside
  std::vector<bool> unreliable_;          // [observer]
  bool partitioned_ = false;
  std::vector<bool> alive_unheard_;       // [target]; empty: none
  std::vector<std::uint32_t> breadth_;    // [country]
};

// An observer is *strained* when failure streaks (of any length: failing or
// on their way) that neither a border on its way, its far side nor a
// server going down explains reach half the unreliable fraction. The
// fleet is partitioned when at least 1 / kPartitionedShareDenominator of
// the observers with a usable view are strained (and at least two), or of
// the roster's servers have no usable view at all (and at least two), or
// are cut off (cut_off_count): silent servers whose witnesses fail them
// look powered off, but a quarter of the fleet at once is this node
// hearing only its side of a split.
inline constexpr std::uint32_t kPartitionedShareDenominator = 4;
inline std::uint32_t strained_permille(const Parameters& params) {
  return params.unreliable_fraction_permille / 2;
}

// `usable`: per server, its latest report when its view is usable, else
// nullptr (the reports the tally holds). `suspect`: per server, true when
// that report alone reaches strained_permille (fails_share); only suspects
// are examined further, so a quiet fleet costs O(failing results).
WitnessJudgement judge_witnesses(const Tally& tally, const std::vector<const ObservedReport*>& usable,
                                 const std::vector<bool>& suspect);

// Servers cut off at once: at least two witnesses fail each and have not
// heard from it since their failures began, nor have we (their silence
// claims hold, Tally::silent_claims), and nobody gets through to it since
// the earliest of those claims began but observers that are themselves so
// claimed. A censor's targets keep
// reporting; a split's far side goes silent from its first failed probe.
// While any server is so cut off, a server heard again whose witnesses'
// claims (at least two, pending now) began no later than a probe interval
// after the last of the cut-off servers' first claims counts too: it was
// cut off with them. When a split heals the far side's reports land one
// by one; without this the last one still to land read as a server
// powered off alone, and was unreachable for a moment (tests/e2e scenario
// 12, 2026-12-05). The flag comes down when the last of them is heard.
// `alive_unheard` (optional): set to the claimed servers reached since the
// claims began (WitnessJudgement::alive_unheard), or left empty when there
// are none.
std::uint32_t cut_off_count(const Tally& tally, const std::vector<const ObservedReport*>& usable,
                            std::vector<bool>* alive_unheard = nullptr);

}  // namespace mesh::verdict
