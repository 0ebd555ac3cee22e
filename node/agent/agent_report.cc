// Agent: probe outcomes into the ledger, and the node's own report: its
// self-check, metrics and probe view, signed and handed to the core.
#include <algorithm>
#include <tuple>

#include "node/agent/agent_impl.h"
#include "node/agent/confirmation.h"
#include "node/agent/detection.h"
#include "node/agent/state_codec.h"
#include "node/agent/warm_up.h"
#include "record/envelope.h"
#include "record/fleet_scale.h"
#include "record/report.h"
#include "verdict/witnesses.h"

namespace mesh::agent {
namespace {

// A report dated at most this much after `now` to keep timestamps rising
// across a small clock step back; beyond it the report takes `now`.
constexpr DurationMs kReportMonotonicSlackMs = 1'000;

UnixMs latest_time(const verdict::ProbeLedger& ledger) {
  UnixMs latest = std::numeric_limits<UnixMs>::min();
  for (const auto& streak : ledger.streaks()) {
    latest = std::max({latest, streak.last_probe_ms, streak.last_ok_ms});
  }
  return latest;
}

// Heartbeats fall on a fleet-wide grid: the multiples of the interval in
// Unix time shifted by the fleet's offset, and each node by its own phase
// of up to this much.
constexpr DurationMs kHeartbeatPhaseMs = 10'000;

// The fleet's offset: the first 8 bytes of the operator's key, big-endian,
// modulo the interval. Every node of a fleet computes the same, and it
// falls on no round time, where operators' and censors' scheduled changes
// (and blocks) begin: a block that begins with the fleet's heartbeats sends
// them all down links not yet found dead (docs/PROTOCOL.md, "When a node
// reports").
DurationMs fleet_offset(const PublicKey& operator_key, DurationMs interval) {
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < 8; ++i) value = (value << 8) | operator_key[i];
  return static_cast<DurationMs>(value % static_cast<std::uint64_t>(interval));
}

// The first grid point after `now`: at most one interval away, so a node
// never goes longer than that without a report. A fleet's heartbeats then
// fall within the same few seconds of each interval however its nodes were
// started (docs/PROTOCOL.md, "When a node reports").
UnixMs next_grid_point(UnixMs now, DurationMs interval, DurationMs phase) {
  const UnixMs shifted = now - phase;
  UnixMs k = shifted / interval;
  if (shifted % interval < 0) --k;  // floor, before 1970 + phase
  return (k + 1) * interval + phase;
}

}  // namespace

void Agent::Impl::record_outcome(const ProbeOutcome& outcome, UnixMs now) {
  auto was = schedule_.finish(outcome.target, outcome.probe_id);
  if (!was) {
    // Late (forgotten as lost) or unknown: its bytes were spent all the same.
    ++counters_.probes_unexpected;
    volume_.settle_probe(0, outcome.wire_bytes, outcome.tls);
    return;
  }
  volume_.settle_probe(was->reserved_bytes, outcome.wire_bytes, was->tls);
  const Roster* roster = core_.roster();
  if (roster == nullptr || !core_.index_of(outcome.target) ||
      static_cast<std::uint8_t>(outcome.failure) > kProbeFailureMax) {
    ++counters_.probes_unexpected;  // the target left the roster meanwhile
    return;
  }
  const verdict::TargetStreak* before = ledger_.find(outcome.target);
  const std::uint32_t threshold = roster->params.fail_streak;
  // The class and reason of a target's result (0: it gets through),
  // whether it is flagged recovered (ProbeResult::recovered), and whether a
  // failure was answered (ProbeResult::unanswered_since_ms).
  using Meaning = std::tuple<int, ProbeFailure, bool, bool>;
  auto meaning_of_streak = [&](const verdict::TargetStreak* streak) {
    if (streak == nullptr) return Meaning{0, ProbeFailure::none, false, false};
    if (streak->fail_streak == 0) {
      return Meaning{0, ProbeFailure::none, streak->result(0, threshold).recovered, false};
    }
    const ResultClass result_class = class_of(streak->fail_streak, threshold);
    return Meaning{static_cast<int>(result_class), streak->reason, false,
                   result_class == ResultClass::failing && streak->answered};
  };
  const auto had = meaning_of_streak(before);
  const bool first = before == nullptr;
  const verdict::TargetStreak* after =
      ledger_.record(outcome.target, now, outcome.failure, roster->params.stale_after_ms,
                     was->heard_ms_at_request, was->requested_ms, was->requested_ms, threshold);
  // A target's first result, or a new class or reason, may be news; its
  // first failure is news at once (confirmation.h).
  const auto has = meaning_of_streak(after);
  if (first || has != had) meaning_dirty_ = true;
  if (std::get<0>(had) == 0 && std::get<0>(has) != 0) first_failure_due_ = true;
  // A streak that became a vote (or a silence claim) is news at once too:
  // the verdict waits for it.
  constexpr int kFailing = static_cast<int>(ResultClass::failing);
  if (std::get<0>(has) == kFailing && (std::get<0>(had) != kFailing || std::get<3>(has) != std::get<3>(had))) {
    vote_due_ = true;
  }
  confirm_failure(outcome.target, after, was->requested_ms, now);
  dirty_streaks_.push_back(outcome.target);
  if (dirty_streaks_.size() > 4 * ledger_.streaks().size() + 64) compact_dirty_streaks();  // no report for long
  ++(outcome.failure == ProbeFailure::none ? counters_.probes_ok : counters_.probes_failed);
}

ProbeView Agent::Impl::current_view(UnixMs now) {
  const Roster* roster = core_.roster();
  const auto self = core_.self_index();
  if (roster == nullptr || !self) return {};
  return ledger_.view_for(*roster, current_targets(now), *self);
}

bool Agent::Impl::meaning_changed(UnixMs now) {
  const Roster* roster = core_.roster();
  if (!published_meaning_ || !last_self_check_ || roster == nullptr) return true;
  meaning_dirty_ = false;
  const ProbeView view = current_view(now);  // (re)plans: assigned_ is now's
  return meaning_at(last_self_check_->self_check, view, now) != *published_meaning_;
}

ReportMeaning Agent::Impl::meaning_at(const SelfCheck& self_check, const ProbeView& view, UnixMs now) const {
  const Roster& roster = *core_.roster();
  const std::uint64_t epoch = verdict::epoch_of(now, roster.params, roster.servers.size());
  ReportMeaning meaning = meaning_of(self_check, view, epoch, assigned_, roster.params.fail_streak);
  meaning.warming = warming(now);
  meaning.alert_sender = alert_sender_;
  return meaning;
}

bool Agent::Impl::still_warming(UnixMs now) const {
  const Roster* roster = core_.roster();
  if (!started_ || roster == nullptr) return true;
  const std::size_t count = roster->servers.size();
  if (now - started_ms_ >= warm_up_ms(roster->params, count)) return false;
  // A member whose stored report is stale is waited for too: a node away
  // longer than stale_after_ms holds only stale reports, sees every member
  // no_data (all in rotation), and would enable the hosts the fleet holds
  // out. A member that is down keeps it warming to the cap.
  const std::optional<std::uint32_t> self = core_.self_index();
  for (std::uint32_t i = 0; i < count; ++i) {
    if (self && i == *self) continue;
    if (!heard_since_start_.contains(roster->servers[i].id)) return true;
  }
  return false;
}

DurationMs Agent::Impl::change_gap() const {
  const Roster* roster = core_.roster();
  return roster == nullptr ? 0 : change_gap_ms(roster->params);
}

// A witness's silence claim is answered at once, not after the change gap:
// until it is, the witness's failures of this node count as silence (a
// partition's sign), and only an answered failure is a vote. Refutations
// are rare (a witness's first failure of a living node, and those of the
// witnesses its report brought forward), and at most one per
// kRefutationGapMs: a block's first witness is refuted, then the others
// its failure made probe at once, 5 s on. With the change gap (15 s) as
// the limit their claims waited for it, and the block's verdict with them
// (meshsim, bench/detection_sweep.sh: 12 to 15 s of a 68 s IP block).
void Agent::Impl::publish_refutation(UnixMs now, AgentEffects& out) {
  if (!refute_due_ || !last_self_check_ || self_check_pending_) return;
  const DurationMs gap = std::min(change_gap(), kRefutationGapMs);
  if (last_refutation_ms_ != std::numeric_limits<UnixMs>::min() && now - last_refutation_ms_ < gap) {
    return;
  }
  refute_due_ = false;
  last_refutation_ms_ = now;
  ++counters_.refutations;
  publish_report(*last_self_check_, now, out);
}

void Agent::Impl::note_flap(const SelfCheck& self_check, UnixMs now, AgentEffects& out) {
  const Roster* roster = core_.roster();
  const bool healthy = self_check.listener_ok && self_check.service_ok;
  const bool was_healthy = !last_self_check_ ||
                           (last_self_check_->self_check.listener_ok && last_self_check_->self_check.service_ok);
  if (healthy == was_healthy || roster == nullptr) return;
  if (healthy) {
    flaps_.recovered(now, roster->params.probe_interval_ms);
  } else {
    flaps_.failed(now);
  }
  out.store.put_state.emplace_back(std::string(kFlapsKey), flaps_.encode());
}

void Agent::Impl::publish_if_changed(UnixMs now, AgentEffects& out) {
  if (!last_self_check_ || self_check_pending_) return;  // the self-check's result will decide
  if (meaning_dirty_ && meaning_changed(now)) change_pending_ = true;
  if (!change_pending_) return;
  auto within_gap = [&](UnixMs last, DurationMs gap) {
    return last != std::numeric_limits<UnixMs>::min() && now - last < gap;
  };
  const DurationMs gap = change_gap();
  const DurationMs news_gap = std::min(gap, kFirstFailureGapMs);
  if (within_gap(last_change_ms_, gap)) {
    // A first failure goes out past the gap, one such report per
    // kFirstFailureGapMs: the other witnesses confirm it at once
    // (confirmation.h). So does a streak that became a vote, one such
    // report per gap: a triggered witness's streak settles about 13 s
    // after its first failure was published, and the gap held every
    // block's verdict about 2 s more.
    if (first_failure_due_ && !within_gap(last_first_failure_ms_, news_gap)) {
      last_first_failure_ms_ = now;
    } else if (vote_due_ && !within_gap(last_vote_ms_, gap)) {
      last_vote_ms_ = now;
    } else {
      return;
    }
  }
  publish_report(*last_self_check_, now, out);
}

void Agent::Impl::publish_report(const SelfCheckOutcome& outcome, UnixMs now, AgentEffects& out) {
  const Roster* roster = core_.roster();
  const auto self = core_.self_index();
  if (roster == nullptr || !self) return;
  UnixMs timestamp = now;
  if (last_report_ms_ >= now && last_report_ms_ + 1 - now <= kReportMonotonicSlackMs) {
    timestamp = last_report_ms_ + 1;
  }
  // Probe times after the report's own timestamp: the clock stepped back
  // before the shell noticed. Treat it as the jump it is.
  if (const UnixMs latest = latest_time(ledger_); latest > timestamp) {
    ledger_.shift(timestamp - latest);
    for (const auto& streak : ledger_.streaks()) dirty_streaks_.push_back(streak.id);
  }
  Report report;
  report.self_check = outcome.self_check;
  report.metrics = outcome.metrics;
  report.view = current_view(now);
  report.flapping = flaps_.at(timestamp);
  report.warming = warming(now);
  report.alert_sender = alert_sender_;
  const Bytes payload = encode_report_payload(report, timestamp);
  const std::uint64_t seq = core_.held_seq(RecordKind::report, config_.core.self).value_or(0) + 1;
  const Bytes raw = encode_signed_record(RecordKind::report, config_.core.self, seq, timestamp,
                                         payload, config_.core.node_key);
  auto published = core_.publish(raw, now);
  if (!published.ok()) {
    ++counters_.reports_refused;
    return;
  }
  last_report_ms_ = timestamp;
  const DurationMs interval = effective_heartbeat_ms(roster->params, roster->servers.size());
  if (!heartbeat_phase_ms_) {
    const DurationMs spread = std::min(interval, kHeartbeatPhaseMs);
    heartbeat_phase_ms_ = static_cast<DurationMs>(rng_.below(static_cast<std::uint64_t>(spread)));
  }
  next_heartbeat_ms_ = next_grid_point(
      now, interval, fleet_offset(config_.core.operator_key, interval) + *heartbeat_phase_ms_);
  ReportMeaning meaning = meaning_at(outcome.self_check, report.view, now);
  if (!published_meaning_ || meaning != *published_meaning_) last_change_ms_ = now;
  published_meaning_ = std::move(meaning);
  meaning_dirty_ = false;
  change_pending_ = false;
  first_failure_due_ = false;
  vote_due_ = false;
  ++counters_.reports_published;
  for (const gossip::PersistRecord& record : published->persist) {
    if (record.kind == RecordKind::report && record.origin_index == *self) out.published = record.raw;
  }
  absorb(std::move(published.value()), out, now);
  store_streaks(out, false);
}

void Agent::Impl::store_streaks(AgentEffects& out, bool all) {
  if (all) {
    for (const auto& streak : ledger_.streaks()) dirty_streaks_.push_back(streak.id);
  }
  compact_dirty_streaks();
  for (const std::string& id : dirty_streaks_) {
    if (const verdict::TargetStreak* streak = ledger_.find(id)) {
      out.store.put_state.emplace_back(streak_key(id), encode_streak(*streak));
    }
  }
  dirty_streaks_.clear();
}

void Agent::Impl::compact_dirty_streaks() {
  std::sort(dirty_streaks_.begin(), dirty_streaks_.end());
  dirty_streaks_.erase(std::unique(dirty_streaks_.begin(), dirty_streaks_.end()), dirty_streaks_.end());
}

void Agent::Impl::store_volume(AgentEffects& out, bool exact) {
  std::optional<VolumeRecord> record = exact ? volume_.exact() : volume_.reservation_due();
  if (record) out.store.put_state.emplace_back(std::string(kVolumeKey), encode_volume(*record));
}

}  // namespace mesh::agent
