#include "verdict/borders.h"

#include <algorithm>
#include <limits>

#include "common/check.h"

namespace mesh::verdict {

// A success says the target is reachable now only when its probe got
// through after the silence claimed against the target began (the
// earliest holding claim's unanswered_since), by an observer that is not
// claimed silent itself (one that is gave its last word before the
// split). A report older than the claims is no evidence, however much
// newer than the target's own last word: across a split the overlay can
// cut a node off from part of its own side for a while, and those
// servers' last reports held, from before the split, reach everyone
// (tests/e2e scenario 12, CI of 2026-12-05: read as reaching the far
// side, they left two of its servers looking powered off alone).
std::uint32_t cut_off_count(const Tally& tally, const std::vector<const ObservedReport*>& usable,
                            std::vector<bool>* alive_unheard) {
  const TallyContext& context = tally.context();
  const std::uint32_t servers = context.fleet->server_count;
  std::vector<bool> claimed(servers, false);
  bool any = false;
  for (std::uint32_t t = 0; t < servers; ++t) {
    claimed[t] = tally.silent_claims(t) >= 2;
    any = any || claimed[t];
  }
  if (!any) return 0;
  auto heard = [&](std::uint32_t t) { return context.heard_ms != nullptr ? (*context.heard_ms)[t] : 0; };
  // first_claim[t]: the earliest unanswered_since among the claims against
  // t; silent_since[t]: among those that hold; pending[t]: the claims
  // against t that no longer hold.
  constexpr UnixMs kNever = std::numeric_limits<UnixMs>::max();
  std::vector<UnixMs> first_claim(servers, kNever);
  std::vector<UnixMs> silent_since(servers, kNever);
  std::vector<std::uint32_t> pending(servers, 0);
  for (std::uint32_t o = 0; o < servers; ++o) {
    if (usable[o] == nullptr) continue;
    for_each_witness_result(context, *usable[o], [&](std::uint32_t t, bool, const ProbeResult& result) {
      if (result.fail_streak == 0 || result.unanswered_since_ms == 0) return;
      first_claim[t] = std::min(first_claim[t], result.unanswered_since_ms);
      if (silence_holds(result, heard(t))) {
        silent_since[t] = std::min(silent_since[t], result.unanswered_since_ms);
      } else {
        ++pending[t];
      }
    });
  }
  std::vector<bool> reached(servers, false);
  for (std::uint32_t o = 0; o < servers; ++o) {
    if (claimed[o] || usable[o] == nullptr) continue;
    for_each_witness_result(context, *usable[o], [&](std::uint32_t t, bool, const ProbeResult& result) {
      if (claimed[t] && result.fail_streak == 0 && result.last_probe_ms >= silent_since[t]) reached[t] = true;
    });
  }
  std::uint32_t cut_off = 0;
  for (std::uint32_t t = 0; t < servers; ++t) {
    cut_off += claimed[t] && !reached[t];
    if (alive_unheard != nullptr && claimed[t] && reached[t]) {
      alive_unheard->resize(servers, false);
      (*alive_unheard)[t] = true;
    }
  }
  if (cut_off == 0) return 0;
  // Cut off with them: heard again since, claimed from the same moment.
  UnixMs last_cut_off_claim = std::numeric_limits<UnixMs>::min();
  for (std::uint32_t t = 0; t < servers; ++t) {
    if (claimed[t] && !reached[t]) last_cut_off_claim = std::max(last_cut_off_claim, first_claim[t]);
  }
  const DurationMs slack = std::max<DurationMs>(context.params->probe_interval_ms, 0);
  if (last_cut_off_claim == kNever || last_cut_off_claim == std::numeric_limits<UnixMs>::min()) return cut_off;
  const UnixMs until = last_cut_off_claim > kNever - slack ? kNever : last_cut_off_claim + slack;
  for (std::uint32_t t = 0; t < servers; ++t) {
    if (claimed[t] || pending[t] < 2) continue;
    cut_off += first_claim[t] <= until;
  }
  return cut_off;
}

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
  j.servers_ = servers;
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
  // A server no witness anywhere gets through to is down (or cut off from
  // everyone): failing it is nobody's own fault. Going down is the same on
  // its way: at least two witness results with a failure streak of any
  // length, none getting through (a server going down, as seen before
  // anyone's streak reaches fail_streak). Breadth, down and going down in
  // one pass over servers x countries (the only such pass of a judgement):
  // down and going down are read for every streak of every suspect observer.
  std::vector<bool> down(servers, false);
  std::vector<bool> going_down(servers, false);
  for (std::uint32_t t = 0; t < servers; ++t) {
    std::uint32_t failing = 0, reporting = 0, succeeding = 0;
    for (std::uint32_t c = 0; c < countries; ++c) {
      if (c != fleet.country_of[t] && holds_against(c, t)) ++j.breadth_[c];
      failing += tally.failing(t, c);
      reporting += tally.reporting(t, c);
      succeeding += tally.succeeding(t, c);
    }
    down[t] = failing >= 2 && succeeding == 0;
    going_down[t] = reporting >= 2 && succeeding == 0;
  }
  // Country X's border against server Y abroad is *confirmed* when it is
  // shown by evidence no far side explains (docs/VERDICTS.md, rule 6): a
  // witness of Y in X that has a failure streak towards Y while Y's
  // country does not hold against it, or while it still gets through to
  // some other server of Y's country (it is not cut off from that country,
  // so Y is singled out), or Y's own result for a
  // server of X with a failure streak while another witness from Y's
  // country gets through to that server, and not only just (Y's country
  // as a whole reaches it, so the cut is Y's). Memoized per (X, Y).
  std::vector<std::int8_t> confirmed_memo(std::size_t{servers} * countries, -1);
  auto confirmed = [&](std::uint32_t country, std::uint32_t server) {
    std::int8_t& memo = confirmed_memo[std::size_t{server} * countries + country];
    if (memo >= 0) return memo == 1;
    const std::uint32_t home = fleet.country_of[server];
    bool shown = false;
    for (std::uint32_t o : tally.streak_observers(server)) {
      if (fleet.country_of[o] == country && (!holds_against(home, o) || tally.through(o, home) > 0)) {
        shown = true;
        break;
      }
    }
    if (!shown && usable[server] != nullptr) {
      for_each_counted_result(*usable[server], params, servers, [&](const ProbeResult& result) {
        if (shown || result.fail_streak == 0 || fleet.country_of[result.target] != country) return;
        // Getting through for a while: a result only just recovered (a
        // block lifting) says nothing of the country's usual reach.
        shown = tally.succeeding(result.target, home) > tally.recovering(result.target, home);
      });
    }
    memo = shown ? 1 : 0;
    return shown;
  };
  // O's failing result for T is the far side of T's country's border: T's
  // country C holds against O, O gets through to none of C's servers (a
  // border cuts an observer from the whole country), and no evidence shows
  // O's own country singling T out. When neither border is confirmed the
  // broader one is the censor's: that is the one symmetric case the data
  // cannot tell (docs/VERDICTS.md, "Borders").
  auto far_side = [&](std::uint32_t observer, std::uint32_t target) {
    const std::uint32_t observer_country = fleet.country_of[observer];
    const std::uint32_t target_country = fleet.country_of[target];
    // Cheapest and most selective first: most failing observers still get
    // through to the target's country.
    if (observer_country == target_country || tally.through(observer, target_country) > 0 ||
        down[target] || !holds_against(target_country, observer) || confirmed(observer_country, target)) {
      return false;
    }
    return confirmed(target_country, observer) || j.breadth_[target_country] >= j.breadth_[observer_country];
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
      // Only a failure confirmed against a living target (answered) is the
      // observer's own, or strains it: one whose target is silent to it (or
      // not heard again yet) says nothing about its network; the far side
      // of a split that cuts gossip too is read from silence (cut_off_count).
      if (result.fail_streak == 0 || result.unanswered_since_ms != 0) return;
      const bool abroad = country != fleet.country_of[t];
      if (is_failing(result, params) && !down[t] && !(abroad && fails(country, t))) ++own;
      // Strain is read from streaks on their way, as borders are: a node
      // publishes each change at once, so across a split the first votes
      // can arrive before the observers' other failures have grown to
      // fail_streak; the strain must show before any vote can. Results
      // that have only just recovered no longer count (until 2026-12-05
      // they held the strain after a heal): a split that heals leaves
      // failures that are silent claims or pending, which are no votes
      // (is_vote), and holding the flag re-raised it minutes after the heal.
      if (down[t] || going_down[t]) return;
      if (abroad && turns_against(country, t) && j.breadth_[country] >= broadest) return;
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
  // Three signs of a split fleet: many observers strained at once (probes
  // fail across the split while gossip still flows); many servers silent
  // at once (a split that also cuts gossip: this node hears only its side);
  // many servers cut off at once (cut_off_count: a censor's targets keep
  // reporting; a split's far side goes silent from its first failed probe,
  // long before its reports go stale).
  const std::uint32_t silent = servers - observers;
  auto many = [](std::uint32_t count, std::uint32_t of) {
    return count >= 2 && count * kPartitionedShareDenominator >= of;
  };
  j.partitioned_ = many(strained, observers) || many(silent, servers) ||
                   many(cut_off_count(tally, usable, &j.alive_unheard_), servers);

  const std::size_t cells = std::size_t{servers} * countries;
  // The same [country][target] layout: copies (the counts were checked
  // non-negative as they were read above).
  j.eligible_ = tally.reporting_cells();
  j.failing_ = tally.failing_cells();
  j.succeeding_ = tally.succeeding_cells();
  j.discarded_.assign(servers, 0);
  j.explained_.assign(servers, 0);
  for (std::uint32_t o = 0; o < servers; ++o) {
    if (!j.unreliable_[o]) continue;
    const std::uint32_t country = fleet.country_of[o];
    for_each_witness_result(context, *usable[o], [&](std::uint32_t target, bool,
                                                     const ProbeResult& result) {
      --j.eligible_[j.cell(target, country)];
      if (tally.votes(result)) --j.failing_[j.cell(target, country)];
      if (result.fail_streak == 0) --j.succeeding_[j.cell(target, country)];
      ++j.discarded_[target];
    });
  }
  // A far side needs an observer that gets through to none of the target's
  // country's servers it probes: only those (observer, country) pairs are
  // searched, in the observer's view, so that a fleet without borders pays
  // one look per pair instead of one per failing result.
  for (std::uint32_t o = 0; o < servers; ++o) {
    if (usable[o] == nullptr || j.unreliable_[o]) continue;
    const std::uint32_t home = fleet.country_of[o];
    bool cut = false;
    for (std::uint32_t c = 0; c < countries && !cut; ++c) cut = c != home && tally.through(o, c) == 0;
    if (!cut) continue;
    for_each_witness_result(context, *usable[o], [&](std::uint32_t t, bool, const ProbeResult& result) {
      const std::uint32_t target_country = fleet.country_of[t];
      if (target_country == home || tally.through(o, target_country) > 0 || !tally.votes(result) ||
          !far_side(o, t)) {
        return;
      }
      --j.eligible_[j.cell(t, home)];
      --j.failing_[j.cell(t, home)];
      ++j.explained_[t];
    });
  }
  for (std::size_t i = 0; i < cells; ++i) {
    MESH_CHECK(j.failing_[i] >= 0 && j.succeeding_[i] >= 0 &&
                   j.failing_[i] + j.succeeding_[i] <= j.eligible_[i],
               "judge_witnesses(): counts out of range");
  }
  return j;
}

}  // namespace mesh::verdict
