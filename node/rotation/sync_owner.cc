#include "node/rotation/sync_owner.h"

#include <algorithm>

#include "record/fleet_scale.h"
#include "verdict/hash.h"

namespace mesh::rotation {
namespace {

constexpr DurationMs kOwnerSettleMaxMs = 10'000;

}  // namespace

std::uint64_t owner_score(std::uint64_t roster_version, std::string_view server) {
  // "panelown" keeps these scores unrelated to the witness draw's.
  return splitmix64(splitmix64(roster_version ^ 0x70616e656c6f776eull) ^ verdict::fnv1a64(server));
}

DurationMs owner_report_age_max_ms(const Roster& roster) {
  const std::size_t count = roster.servers.size();
  return std::min(effective_stale_after_ms(roster.params, count),
                  2 * effective_heartbeat_ms(roster.params, count));
}

ReportTimes report_times(const verdict::Evaluation& evaluation) {
  ReportTimes times;
  times.now_ms = evaluation.now_ms;
  for (const verdict::ServerVerdict& server : evaluation.servers) times.last_report_ms.push_back(server.last_report_ms);
  return times;
}

std::optional<UnixMs> latest_sender_claim(const ReportTimes& times) {
  std::optional<UnixMs> latest;
  for (std::size_t i = 0; i < times.alert_sender.size() && i < times.last_report_ms.size(); ++i) {
    if (times.alert_sender[i] && (!latest || times.last_report_ms[i] > *latest)) latest = times.last_report_ms[i];
  }
  return latest;
}

std::optional<ServerId> sync_owner(const Roster& roster, const verdict::Evaluation& evaluation,
                                   const ReportTimes& times, std::span<const ServerId> candidates) {
  const DurationMs age_max = owner_report_age_max_ms(roster);
  // Four tiers, best first: warm and steady, warm, warming and steady,
  // warming. A warming candidate started lately and may judge from reports
  // it has not caught up with yet (node/agent/warm_up.h): a restarted
  // sender once took the role back within a second and re-enabled a host
  // the fleet held out (tests/panels/alert_soak, 2026-12-05). A candidate
  // whose service flaps is ok one moment and not the next; as the owner it
  // handed the sync (and the alerts pending at each hand-over) back and
  // forth every few seconds (the same soak). A fleet that starts at once
  // is warming everywhere and still has an owner.
  std::optional<ServerId> best;
  std::uint64_t best_score = 0;
  int best_tier = 0;
  for (std::size_t i = 0; i < evaluation.servers.size() && i < times.last_report_ms.size(); ++i) {
    const verdict::ServerVerdict& server = evaluation.servers[i];
    if (!candidates.empty() && std::find(candidates.begin(), candidates.end(), server.id) == candidates.end()) {
      continue;
    }
    const UnixMs last = times.last_report_ms[i];
    if (server.status != verdict::ServerStatus::ok || last <= 0) continue;
    if (times.now_ms - last > age_max) continue;
    const bool warm = i >= times.warming.size() || !times.warming[i];
    const bool steady = server.flap_changes == 0 && !server.flags.held_out;
    const int tier = (warm ? 2 : 0) + (steady ? 1 : 0);
    const std::uint64_t score = owner_score(roster.version, server.id);
    const bool better = !best || tier > best_tier ||
                        (tier == best_tier && (score > best_score || (score == best_score && server.id < *best)));
    if (better) {
      best = server.id;
      best_score = score;
      best_tier = tier;
    }
  }
  return best;
}

DurationMs owner_settle_ms(const Roster& roster) {
  return std::min(kOwnerSettleMaxMs, owner_report_age_max_ms(roster));
}

bool OwnerTerm::observe(WriteRight right, UnixMs now_ms, DurationMs settle_ms) {
  if (right != WriteRight::owner) {
    since_ms_ = -1;
    return false;
  }
  if (since_ms_ < 0 || now_ms < since_ms_) since_ms_ = now_ms;  // a clock stepped back starts the term again
  return now_ms - since_ms_ >= settle_ms;
}

const char* to_string(WriteRight right) {
  switch (right) {
    case WriteRight::owner: return "owner";
    case WriteRight::not_owner: return "not_owner";
    case WriteRight::no_owner: return "no_owner";
    case WriteRight::partitioned: return "partitioned";
    case WriteRight::clock_suspect: return "clock_suspect";
    case WriteRight::warming: return "warming";
  }
  return "?";
}

UnixMs freshness_reference_ms(const Roster& roster, const verdict::Evaluation& evaluation, const ReportTimes& times,
                              std::string_view self) {
  UnixMs freshest_other = 0;
  for (std::size_t i = 0; i < evaluation.servers.size() && i < times.last_report_ms.size(); ++i) {
    if (evaluation.servers[i].id != self) freshest_other = std::max(freshest_other, times.last_report_ms[i]);
  }
  if (freshest_other <= 0) return times.now_ms;
  return std::min(times.now_ms,
                  freshest_other + effective_heartbeat_ms(roster.params, roster.servers.size()));
}

OwnerView write_right(const Roster& roster, const verdict::Evaluation& evaluation, const ReportTimes& times,
                      std::span<const ServerId> candidates, std::string_view self, bool clock_suspect,
                      bool warming) {
  OwnerView view;
  ReportTimes judged = times;
  judged.now_ms = freshness_reference_ms(roster, evaluation, times, self);
  view.owner = sync_owner(roster, evaluation, judged, candidates);
  if (evaluation.partitioned) view.right = WriteRight::partitioned;
  else if (clock_suspect) view.right = WriteRight::clock_suspect;
  else if (warming) view.right = WriteRight::warming;
  else if (!view.owner) view.right = WriteRight::no_owner;
  else view.right = *view.owner == self ? WriteRight::owner : WriteRight::not_owner;
  return view;
}

}  // namespace mesh::rotation
