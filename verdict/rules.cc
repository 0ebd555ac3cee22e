#include "verdict/rules.h"

#include <algorithm>

#include "common/check.h"

namespace mesh::verdict {
namespace {

void count_votes(const RuleInputs& in, std::uint32_t target, ServerVerdict& verdict) {
  const Tally& tally = *in.tally;
  const WitnessJudgement& judged = *in.judgement;
  std::uint32_t reporting = 0;
  // A country where a trusted witness fails it and another witness (even an
  // unreliable one: a success is real evidence) gets through.
  bool split = false;
  verdict.by_country.reserve(tally.country_count());
  for (std::uint32_t c = 0; c < tally.country_count(); ++c) {
    CountryTally row{in.fleet->countries[c], judged.failing(target, c),
                     judged.eligible(target, c), tally.missing(target, c)};
    reporting += tally.reporting(target, c);
    split = split || (row.failing > 0 && tally.succeeding(target, c) > 0);
    verdict.failing += row.failing;
    verdict.eligible += row.eligible;
    verdict.missing += row.missing;
    if (row.eligible != 0 || row.missing != 0 || tally.assigned(target, c) != 0) {
      verdict.by_country.push_back(std::move(row));
    }
  }
  verdict.discarded = judged.discarded(target);
  verdict.explained = judged.explained(target);
  // The quorum counts every witness with a result: discarding or explaining
  // evidence never lowers the bar.
  const std::uint32_t witnesses = in.roster->params.quorum_witnesses;
  verdict.quorum = std::max<std::uint32_t>(2, std::min(witnesses, reporting));
  const bool enough = verdict.failing >= verdict.quorum;
  verdict.flags.unreachable = enough && !split && !judged.partitioned() && !judged.alive_unheard(target);
  verdict.flags.insufficient_evidence =
      !verdict.flags.unreachable && verdict.failing > 0 && (enough || verdict.eligible < verdict.quorum);
}

void apply_report(const RuleInputs& in, std::uint32_t target, ServerVerdict& verdict) {
  const ObservedReport* latest = (*in.latest)[target];
  bool fresh = latest != nullptr && is_fresh(*latest, in.now_ms, *in.roster);
  verdict.flags.no_data = !fresh;
  if (latest != nullptr) {
    verdict.last_report_ms = latest->timestamp_ms;
    if (!fresh) verdict.badges.emplace_back(kBadgeStale);
  }
  if (!fresh) {
    verdict.badges.emplace_back(kBadgeAgentSilent);
    return;
  }
  const SelfCheck& self_check = latest->report.self_check;
  verdict.flags.unavailable = !self_check.listener_ok || !self_check.service_ok;
  if (verdict.flags.unavailable) verdict.self_check_reason = self_check.reason;
  // Flapping (docs/VERDICTS.md): healthy again, but held out until its own
  // hold-down ends, which every node reads from the same report.
  const Flapping& flapping = latest->report.flapping;
  verdict.flap_changes = flapping.changes;
  verdict.flags.held_out = !verdict.flags.unavailable && flapping.hold_ms > 0 &&
                           in.now_ms - latest->timestamp_ms < flapping.hold_ms;
}

void apply_precedence(ServerVerdict& verdict) {
  if (verdict.flags.unavailable) {
    verdict.status = ServerStatus::unavailable;
    verdict.caption = kCaptionUnavailable;
  } else if (verdict.flags.unreachable) {
    verdict.status = ServerStatus::unreachable;
    verdict.caption = unreachable_caption(verdict.failing, verdict.eligible);
  } else if (verdict.flags.no_data) {
    verdict.status = ServerStatus::no_data;
    verdict.caption = kCaptionNoData;
  } else {
    verdict.status = ServerStatus::ok;
    if (verdict.flags.insufficient_evidence) {
      verdict.caption = insufficient_caption(verdict.failing, verdict.eligible);
    }
  }
  if (verdict.flags.held_out && verdict.status == ServerStatus::ok) {
    verdict.caption = held_out_caption(verdict.flap_changes);
  }
}

bool in_rotation(const ServerVerdict& verdict) {
  return (verdict.status == ServerStatus::ok || verdict.status == ServerStatus::no_data) &&
         !verdict.flags.held_out;
}

// Best-available rank: a server whose own self-check failed ranks below
// one that is only unreachable; then the lower fraction of failing
// eligible witnesses (N/M compared by cross-multiplication; M = 0 counts
// as 0). Equal keys tie, and every tied server is served.
bool rank_better(const ServerVerdict& a, const ServerVerdict& b) {
  if (a.flags.unavailable != b.flags.unavailable) return !a.flags.unavailable;
  std::uint64_t a_fraction = std::uint64_t{a.failing} * std::max<std::uint32_t>(b.eligible, 1);
  std::uint64_t b_fraction = std::uint64_t{b.failing} * std::max<std::uint32_t>(a.eligible, 1);
  if (a.eligible == 0) a_fraction = 0;
  if (b.eligible == 0) b_fraction = 0;
  return a_fraction < b_fraction;
}

RouteMembership route_membership(const Route& route, const std::vector<std::uint32_t>& indices,
                                 const std::vector<ServerVerdict>& servers) {
  RouteMembership membership{route.id, {}, false, {}};
  for (std::uint32_t i : indices) {
    if (in_rotation(servers[i])) membership.members.push_back(servers[i].id);
  }
  if (!membership.members.empty()) return membership;
  membership.degraded = true;
  if (indices.empty()) {
    membership.degraded_reason = "route has no servers";
    return membership;
  }
  std::uint32_t best = indices[0];
  for (std::uint32_t i : indices) {
    if (rank_better(servers[i], servers[best])) best = i;
  }
  std::uint32_t unavailable = 0;
  std::uint32_t held_out = 0;
  for (std::uint32_t i : indices) {
    if (servers[i].flags.unavailable) ++unavailable;
    if (servers[i].flags.held_out) ++held_out;
    bool tied = !rank_better(servers[best], servers[i]) && !rank_better(servers[i], servers[best]);
    if (tied) membership.members.push_back(servers[i].id);
  }
  const std::uint32_t unreachable = static_cast<std::uint32_t>(indices.size()) - unavailable - held_out;
  membership.degraded_reason = "no server in rotation (" + std::to_string(unavailable) +
                               " unavailable, " + std::to_string(unreachable) + " unreachable" +
                               (held_out > 0 ? ", " + std::to_string(held_out) + " held out" : "") +
                               "): serving the best available";
  return membership;
}

}  // namespace

ServerVerdict judge_server(const RuleInputs& in, std::uint32_t target) {
  ServerVerdict verdict;
  verdict.id = in.roster->servers[target].id;
  count_votes(in, target, verdict);
  apply_report(in, target, verdict);
  apply_precedence(verdict);
  return verdict;
}

std::vector<RouteMembership> route_memberships(const Roster& roster, const Fleet& fleet,
                                               const std::vector<ServerVerdict>& servers) {
  std::vector<RouteMembership> routes;
  for (std::size_t r = 0; r < roster.routes.size(); ++r) {
    routes.push_back(route_membership(roster.routes[r], fleet.route_members[r], servers));
  }
  return routes;
}

Evaluation assemble_evaluation(const RuleInputs& in) {
  MESH_CHECK(in.roster && in.fleet && in.tally && in.latest && in.judgement,
             "assemble_evaluation(): incomplete inputs");
  Evaluation evaluation;
  evaluation.roster_version = in.roster->version;
  evaluation.now_ms = in.now_ms;
  evaluation.epoch = in.epoch;
  evaluation.grace = in.grace;
  evaluation.reports_ignored = in.reports_ignored;
  evaluation.partitioned = in.judgement->partitioned();
  evaluation.servers.reserve(in.fleet->server_count);
  for (std::uint32_t t = 0; t < in.fleet->server_count; ++t) {
    evaluation.servers.push_back(judge_server(in, t));
    if (in.judgement->unreliable(t)) evaluation.unreliable_observers.push_back(in.roster->servers[t].id);
  }
  evaluation.routes = route_memberships(*in.roster, *in.fleet, evaluation.servers);
  return evaluation;
}

}  // namespace mesh::verdict
