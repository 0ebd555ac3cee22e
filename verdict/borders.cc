#include "verdict/borders.h"

#include <algorithm>

#include "common/check.h"

namespace mesh::verdict {

WitnessJudgement judge_witnesses(const Tally& tally, const std::vector<const ObservedReport*>& usable,
                                 const std::vector<bool>& suspect) {
  const TallyContext& context = tally.context();
  const Fleet& fleet = *context.fleet;
  const Parameters& params = *context.params;
  const std::uint32_t servers = fleet.server_count;
  const std::uint32_t countries = tally.country_count();
  MESH_CHECK(usable.size() == servers && suspect.size() == servers,
             "judge_witnesses(): one entry per server");

  WitnessJudgement j;
  j.countries_ = countries;
  j.breadth_.assign(countries, 0);
  auto fails = [&](std::uint32_t country, std::uint32_t target) {
    return tally.failing(target, country) >= 2 && tally.succeeding(target, country) == 0;
  };
  // C *turns against* T when at least two of C's witness results for T have
  // a failure streak (any length) and none gets through: a border on its
  // way. The far side is read from it, so that it is set aside from the
  // moment it could first become a vote (both sides of a border start
  // failing together, and each side's reports arrive in their own time).
  auto turns_against = [&](std::uint32_t country, std::uint32_t target) {
    return tally.reporting(target, country) >= 2 && tally.succeeding(target, country) == 0;
  };
  // C *holds against* T while it turns against T or has only just stopped:
  // every one of (at least two) witness results has a failure streak or got
  // through only lately (flagged recovered). When a border lifts, its
  // country's witnesses get through first, while the far side's last failing
  // reports are still to be replaced; the far side stands until both sides
  // have recovered. Breadth is read from it, for the same reason.
  auto holds_against = [&](std::uint32_t country, std::uint32_t target) {
    return tally.reporting(target, country) >= 2 &&
           tally.succeeding(target, country) == tally.recovering(target, country);
  };
  for (std::uint32_t t = 0; t < servers; ++t) {
    for (std::uint32_t c = 0; c < countries; ++c) {
      if (c != fleet.country_of[t] && holds_against(c, t)) ++j.breadth_[c];
    }
  }
  // A server no witness anywhere gets through to is down (or cut off from
  // everyone): failing it is nobody's own fault. Going down is the same on
  // its way: at least two witness results with a failure streak of any
  // length, none getting through (a server going down, as seen before
  // anyone's streak reaches fail_streak). Both in one pass over servers x
  // countries: they are read for every streak of every suspect observer.
  std::vector<bool> down(servers, false);
  std::vector<bool> going_down(servers, false);
  for (std::uint32_t t = 0; t < servers; ++t) {
    std::uint32_t failing = 0, reporting = 0, succeeding = 0;
    for (std::uint32_t c = 0; c < countries; ++c) {
      failing += tally.failing(t, c);
      reporting += tally.reporting(t, c);
      succeeding += tally.succeeding(t, c);
    }
    down[t] = failing >= 2 && succeeding == 0;
    going_down[t] = reporting >= 2 && succeeding == 0;
  }
  // O's failing result for T is the far side of T's country's border.
  auto far_side = [&](std::uint32_t observer, std::uint32_t target) {
    const std::uint32_t observer_country = fleet.country_of[observer];
    const std::uint32_t target_country = fleet.country_of[target];
    return !down[target] && observer_country != target_country &&
           holds_against(target_country, observer) &&
           j.breadth_[target_country] >= j.breadth_[observer_country];
  };

  // The censor's border is the broadest: a split of the fleet makes every
  // country turn against a few servers across it, a censor turns against
  // many. Only the broadest border explains strain.
  std::uint32_t broadest = 0;
  for (std::uint32_t c = 0; c < countries; ++c) broadest = std::max(broadest, j.breadth_[c]);
  j.unreliable_.assign(servers, false);
  std::uint32_t strained = 0;
  for (std::uint32_t o = 0; o < servers; ++o) {
    if (!suspect[o] || usable[o] == nullptr) continue;
    std::uint64_t probed = 0;
    std::uint64_t own = 0;       // failures no border of its own country explains
    std::uint64_t unshared = 0;  // streaks (on their way too) nothing explains
    const std::uint32_t country = fleet.country_of[o];
    for_each_counted_result(*usable[o], params, servers, [&](const ProbeResult& result) {
      ++probed;
      const std::uint32_t t = result.target;
      const bool streak = result.fail_streak > 0;
      if (!streak && !result.recovered) return;
      const bool abroad = country != fleet.country_of[t];
      if (is_failing(result, params) && !down[t] && !(abroad && fails(country, t))) ++own;
      // Strain is read from streaks on their way, as borders are: a node
      // publishes each change at once, so across a split the first votes
      // can arrive before the observers' other failures have grown to
      // fail_streak; the strain must show before any vote can. It also
      // stands while results have only just recovered, as a lifted border
      // does: when a split heals, each observer gets through to the other
      // side one probe at a time, and its strain must not lift while
      // witnesses that have not probed again still fail the other side.
      if (down[t] || going_down[t]) return;
      if (abroad && (streak ? turns_against(country, t) : holds_against(country, t)) &&
          j.breadth_[country] >= broadest) {
        return;
      }
      if (abroad && far_side(o, t)) return;
      ++unshared;
    });
    const bool counted = probed >= params.unreliable_min_targets && probed > 0;
    j.unreliable_[o] = counted && own * 1000 >= std::uint64_t{params.unreliable_fraction_permille} * probed;
    if (counted && unshared * 1000 >= std::uint64_t{strained_permille(params)} * probed) ++strained;
  }

  std::uint32_t observers = 0;
  for (std::uint32_t o = 0; o < servers; ++o) {
    if (usable[o] != nullptr) ++observers;
  }
  // Two signs of a split fleet: many observers strained at once (probes
  // fail across the split while gossip still flows), or many servers silent
  // at once (a split that also cuts gossip: this node hears only its side).
  const std::uint32_t silent = servers - observers;
  j.partitioned_ = (strained >= 2 && strained * kPartitionedShareDenominator >= observers) ||
                   (silent >= 2 && silent * kPartitionedShareDenominator >= servers);

  const std::size_t cells = std::size_t{servers} * countries;
  j.eligible_.resize(cells);
  j.failing_.resize(cells);
  j.succeeding_.resize(cells);
  for (std::uint32_t t = 0; t < servers; ++t) {
    for (std::uint32_t c = 0; c < countries; ++c) {
      j.eligible_[j.cell(t, c)] = static_cast<std::int32_t>(tally.reporting(t, c));
      j.failing_[j.cell(t, c)] = static_cast<std::int32_t>(tally.failing(t, c));
      j.succeeding_[j.cell(t, c)] = static_cast<std::int32_t>(tally.succeeding(t, c));
    }
  }
  j.discarded_.assign(servers, 0);
  j.explained_.assign(servers, 0);
  for (std::uint32_t o = 0; o < servers; ++o) {
    if (!j.unreliable_[o]) continue;
    const std::uint32_t country = fleet.country_of[o];
    for_each_witness_result(context, *usable[o], [&](std::uint32_t target, bool,
                                                     const ProbeResult& result) {
      --j.eligible_[j.cell(target, country)];
      if (is_failing(result, params)) --j.failing_[j.cell(target, country)];
      if (result.fail_streak == 0) --j.succeeding_[j.cell(target, country)];
      ++j.discarded_[target];
    });
  }
  for (std::uint32_t t = 0; t < servers; ++t) {
    for (std::uint32_t o : tally.failing_observers(t)) {
      if (j.unreliable_[o] || !far_side(o, t)) continue;
      --j.eligible_[j.cell(t, fleet.country_of[o])];
      --j.failing_[j.cell(t, fleet.country_of[o])];
      ++j.explained_[t];
    }
  }
  for (std::size_t i = 0; i < cells; ++i) {
    MESH_CHECK(j.failing_[i] >= 0 && j.succeeding_[i] >= 0 &&
                   j.failing_[i] + j.succeeding_[i] <= j.eligible_[i],
               "judge_witnesses(): counts out of range");
  }
  return j;
}

}  // namespace mesh::verdict
