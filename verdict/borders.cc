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
  // A success is *outdated* when its probe is no newer than the last
  // success of one of its country's results for the same target that has a
  // failure streak: a compatriot got through later and has failed since, so
  // the country's latest word on the target is a failure, and the success
  // says nothing of the border it may show. A healthy node reports on
  // change and heartbeat, so its success can be minutes old in the report
  // held, and a node busy with its own failures may not have probed that
  // target again yet: when a country blocks most of the fleet, such
  // successes kept the blocking country from holding against a server it
  // blocks, or confirmed its border against one of its own servers, and the
  // far side's failures counted as votes for one check (meshsim
  // mass-block-80 at N = 100 in 5 countries, seeds 1-3, until 2026-12-06).
  // An outdated success is read as no result there; a success flagged
  // recovered never is (it tells of a border lifting).
  // Breadth, turning against, failing and the verdicts' own counts (rule 8
  // and after) read every result.
  //
  // The far side and a confirmed border (below) need only whether every
  // plain success of a cell is outdated (then they read the cell without
  // them), so the search stops at the first success that is not: found at
  // once where the country gets through, which is nearly everywhere. Asked
  // only where the answer can change theirs, and memoized per cell.
  const std::size_t cells = std::size_t{servers} * countries;
  std::vector<std::int8_t> outdated_memo(cells, -1);
  auto all_outdated = [&](std::uint32_t country, std::uint32_t target) {
    if (tally.succeeding(target, country) == tally.recovering(target, country)) return true;  // none to read
    if (tally.reporting(target, country) == tally.succeeding(target, country)) return false;  // no streak
    std::int8_t& memo = outdated_memo[j.cell(target, country)];
    if (memo >= 0) return memo == 1;
    UnixMs since = std::numeric_limits<UnixMs>::min();
    for (std::uint32_t o : tally.streak_observers(target)) {
      if (fleet.country_of[o] != country || usable[o] == nullptr) continue;
      const ProbeResult* result = counted_result(*usable[o], params, servers, target);
      if (result != nullptr && result->fail_streak > 0) since = std::max(since, result->last_ok_ms);
    }
    // A plain success of `o` newer than every streak's last success; the
    // outdated ones are counted, so that a cell whose successes were not
    // all found (none should be missed) is never read as all outdated.
    std::uint32_t stale = 0;
    auto fresh = [&](std::uint32_t o) {
      if (o == target || fleet.country_of[o] != country || usable[o] == nullptr) return false;
      const ProbeResult* result = counted_result(*usable[o], params, servers, target);
      if (result == nullptr || result->fail_streak != 0 || result->recovered) return false;
      if (result->last_probe_ms > since) return true;
      ++stale;
      return false;
    };
    bool any_fresh = false;
    const WitnessPlan& current = *context.current;
    const WitnessPlan* previous = context.previous;
    if (current.full_mesh || (previous != nullptr && previous->full_mesh)) {
      for (std::uint32_t o : fleet.members_of_country[country]) {
        if (current.is_witness(o, target) || (previous != nullptr && previous->is_witness(o, target))) {
          if ((any_fresh = fresh(o))) break;
        }
      }
    } else {
      for (std::uint32_t o : current.witnesses_of_target[target]) {
        if ((any_fresh = fresh(o))) break;
      }
      if (!any_fresh && previous != nullptr) {
        for (std::uint32_t o : previous->witnesses_of_target[target]) {
          if (!current.is_witness(o, target) && (any_fresh = fresh(o))) break;
        }
      }
    }
    const bool outdated =
        !any_fresh && stale == tally.succeeding(target, country) - tally.recovering(target, country);
    memo = outdated ? 1 : 0;
    return outdated;
  };
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
  // The same, without C's outdated successes when all of its plain ones
  // are: what the far side and a confirmed border read (one result's fate
  // each, where an outdated success made a false vote), not breadth, which
  // counts over every cell of the fleet.
  auto holds_against_now = [&](std::uint32_t country, std::uint32_t target) {
    if (holds_against(country, target)) return true;
    const std::uint32_t against = tally.reporting(target, country) - tally.succeeding(target, country) +
                                  tally.recovering(target, country);
    return against >= 2 && all_outdated(country, target);
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
      if (fleet.country_of[o] == country && (tally.through(o, home) > 0 || !holds_against_now(home, o))) {
        shown = true;
        break;
      }
    }
    if (!shown && usable[server] != nullptr) {
      for_each_counted_result(*usable[server], params, servers, [&](const ProbeResult& result) {
        if (shown || result.fail_streak == 0 || fleet.country_of[result.target] != country) return;
        // Getting through for a while, and lately: a result only just
        // recovered (a block lifting), or outdated, says nothing of the
        // country's usual reach.
        shown = !all_outdated(home, result.target);
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
        down[target] || !holds_against_now(target_country, observer) || confirmed(observer_country, target)) {
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
