// Agent: what happens on its own timers, at each tick. Every timer is a
// time compared with the `now` the shell passes in (TigerBeetle style:
// timeouts are data), so meshsim and the daemon run the same schedule.
#include <algorithm>

#include "node/agent/agent_impl.h"
#include "node/agent/state_codec.h"
#include "node/agent/tls_turns.h"
#include "verdict/evaluation.h"

namespace mesh::agent {
namespace {

constexpr DurationMs kFirstSelfCheckSpreadMs = 10'000;
// Self-checks per probe interval. A self-check costs no bytes on the wire
// (a report leaves only when its result changes), so a stopped service is
// seen within a quarter of an interval (15 s by default) instead of one
// (issue 37: "Service down: <= 30 s at every node").
constexpr DurationMs kSelfChecksPerProbeInterval = 4;

}  // namespace

// A self-check every probe_interval_ms / kSelfChecksPerProbeInterval, the
// first at a random point of the first
// kFirstSelfCheckSpreadMs (or of one interval, when shorter) after the
// roster arrives: a fleet started at once is heard from within seconds,
// and its nodes' heartbeats do not fall in the same second. Its result
// becomes a report when the report's meaning changed or the heartbeat is
// due (on_self_check). A change found between self-checks (a probe
// outcome, a new epoch) is published at once with the last self-check's
// result, at most one per change_gap().
void Agent::Impl::tick_reports(UnixMs now, AgentEffects& out) {
  const Roster* roster = core_.roster();
  if (roster == nullptr || !core_.self_index()) return;
  const DurationMs interval =
      std::max<DurationMs>(roster->params.probe_interval_ms / kSelfChecksPerProbeInterval, 1);
  if (!next_self_check_ms_) {
    const DurationMs spread = std::min(interval, kFirstSelfCheckSpreadMs);
    next_self_check_ms_ = now + static_cast<DurationMs>(rng_.below(static_cast<std::uint64_t>(spread)));
  }
  const bool heartbeat_due = next_heartbeat_ms_ && now >= *next_heartbeat_ms_;
  if ((now >= *next_self_check_ms_ || heartbeat_due) && !self_check_pending_) {
    // Behind by more than an interval (a stalled host, a clock step): go on
    // from now instead of catching up with a burst.
    if (now >= *next_self_check_ms_) {
      *next_self_check_ms_ += interval;
      if (*next_self_check_ms_ <= now) *next_self_check_ms_ = now + interval;
    }
    self_check_pending_ = true;
    out.self_check_due = true;
    ++counters_.self_checks_requested;
    return;
  }
  if (!warm_ && !still_warming(now)) {
    warm_ = true;
    heard_since_start_.clear();
    if (published_meaning_ && published_meaning_->warming) meaning_dirty_ = true;
  }
  publish_if_changed(now, out);
}

// Which probes are TLS handshakes: node/agent/tls_turns.h.
void Agent::Impl::tick_probes(UnixMs now, AgentEffects& out) {
  const Roster* roster = core_.roster();
  if (roster == nullptr || !core_.self_index()) return;
  current_targets(now);
  probe_interval_ms_ = volume_.paced_interval(roster->params.probe_interval_ms, pacing_targets_,
                                              tls_period_, now);
  counters_.probes_lost += schedule_.expire(now, config_.probe_lost_after_ms);
  const UnixMs hints_from = now - roster->params.stale_after_ms;
  schedule_.for_each_due(now, [&](ScheduledTarget& target) {
    if (schedule_.in_flight() >= config_.probes_in_flight_max) return false;
    bool tls = false;
    if (config_.tls_every > 0 && probe_interval_ms_ > 0) {
      const UnixMs hint = tls_hints_[target.index];
      const TurnGrid grid{target.turn, target.index, target.base_phase, target.phase, probe_interval_ms_,
                          config_.tls_every};
      tls = wants_tls({ledger_.find(target.id), target.last_tls_ms, target.added_ms,
                       hint >= hints_from ? hint : std::numeric_limits<UnixMs>::min(),
                       latest_turn_ms(grid, now)});
    }
    const std::uint64_t reserve = tls ? kProbeReserveTlsBytes : kProbeReserveTcpBytes;
    if (!volume_.reserve_probe(reserve)) {
      schedule_.defer(target, now + probe_interval_ms_);
      return true;
    }
    const std::uint64_t probe_id = next_probe_id_++;
    schedule_.start(target, probe_id, now, probe_interval_ms_, reserve, tls);
    target.heard_ms_at_request = heard_ms(target.index);
    const ServerEntry& server = roster->servers[target.index];
    out.probes.push_back(ProbeRequest{probe_id, target.id, server.probe, server.sni, tls});
    ++counters_.probes_requested;
    return true;
  });
}

// Verdicts move with new reports and with time (a report goes stale), so
// they are evaluated when a report changed, and every verdict_refresh_ms
// anyway. Only a change an operator would see makes a new snapshot.
void Agent::Impl::tick_verdicts(UnixMs now, AgentEffects& out) {
  if (config_.verdict_refresh_ms <= 0 || !config_.core.hold_decoded_reports ||
      core_.roster() == nullptr) {
    return;
  }
  if (!feed_.dirty() && now - last_evaluation_ms_ < config_.verdict_refresh_ms) return;
  auto evaluation = std::make_shared<const verdict::Evaluation>(evaluate(now));
  const bool changed = snapshot_ == nullptr || !same_verdicts(*snapshot_, *evaluation);
  snapshot_ = std::move(evaluation);
  if (!changed) return;
  ++counters_.verdict_snapshots;
  out.verdicts = snapshot_;
  const std::string json = verdict::to_canonical_json(*snapshot_);
  out.store.put_state.emplace_back(std::string(kVerdictsKey), Bytes(json.begin(), json.end()));
}

UnixMs Agent::Impl::fleet_time(UnixMs now) const {
  const Roster* roster = core_.roster();
  if (roster == nullptr) return now;
  const ClockState clock = clock_.state(now, roster->params);
  return clock.suspect == ClockSuspect::ahead ? now - clock.offset_ms : now;
}

verdict::Evaluation Agent::Impl::evaluate(UnixMs now) {
  MESH_CHECK(config_.core.hold_decoded_reports, "Agent::evaluate needs hold_decoded_reports");
  MESH_CHECK(core_.roster() != nullptr, "Agent::evaluate without a roster");
  ++counters_.verdict_evaluations;
  last_evaluation_ms_ = now;
  // A clock that runs ahead would see every fresh report stale: the fleet's
  // time is the one the reports were made in (docs/VERDICTS.md).
  return feed_.evaluate(core_, fleet_time(now));
}

}  // namespace mesh::agent
