// Agent: construction, start, the public API, and the core's effects.
#include "node/agent/agent.h"

#include <algorithm>
#include <limits>

#include "node/agent/agent_impl.h"
#include "node/agent/confirmation.h"
#include "node/agent/state_codec.h"
#include "node/agent/tls_turns.h"
#include "node/agent/wire_cost.h"
#include "record/envelope.h"
#include "record/fleet_scale.h"
#include "record/report.h"
#include "verdict/witnesses.h"

namespace mesh::agent {

const char* to_string(AgentError error) {
  switch (error) {
    case AgentError::corrupt_state: return "corrupt_state";
  }
  return "unknown";
}

Agent::Impl::Impl(AgentConfig config, std::uint64_t seed, AgentShared shared)
    : config_(std::move(config)),
      rng_(mix_seed(seed, 0x6167656e74)),  // "agent": apart from the core's stream
      core_(config_.core, seed, shared.work),
      plans_(shared.plans != nullptr ? *shared.plans : own_plans_) {
  volume_.set_cap(effective_cap());
}

std::uint64_t Agent::Impl::effective_cap() const {
  const Roster* roster = core_.roster();
  const std::uint64_t fleet = roster != nullptr ? roster->params.volume_bytes_per_day_max
                                                : Parameters{}.volume_bytes_per_day_max;
  const std::uint64_t own = config_.volume_cap_bytes_per_day;
  return own == 0 ? fleet : std::min(own, fleet);
}

void Agent::Impl::absorb(gossip::Effects&& effects, AgentEffects& out, UnixMs now) {
  for (gossip::Outgoing& frame : effects.send) {
    if (!volume_.charge_frame(frame_wire_bytes(frame.frame.size()), now)) continue;
    out.send.push_back(std::move(frame));
  }
  for (gossip::PersistRecord& record : effects.persist) {
    out.store.put_records.push_back(std::move(record));
  }
  for (auto& erased : effects.erase) out.store.erase_records.push_back(std::move(erased));
  if (effects.roster_changed) on_roster_changed(out);
  feed_.reports_changed(effects.reports_changed);
  const Roster* roster = core_.roster();
  if (effects.sender && roster != nullptr && *effects.sender < roster->servers.size()) {
    out.frame_sender = roster->servers[*effects.sender].id;
  }
  out.paths_healing = out.paths_healing || effects.paths_healing;
}

void Agent::Impl::watch_clock(const gossip::Effects& effects, UnixMs now) {
  const std::optional<std::uint32_t> self = core_.self_index();
  for (std::uint32_t index : effects.reports_changed) {
    if (self && index == *self) continue;
    if (auto held = core_.report_of(index)) clock_.on_arrival(index, held->envelope->timestamp_ms, now);
  }
  clock_.on_future_total(core_.counters().records_future, now);
}

UnixMs Agent::Impl::heard_ms(std::uint32_t index) const {
  const std::optional<gossip::HeldRecord> held = core_.report_of(index);
  return held ? held->envelope->timestamp_ms : 0;
}

std::vector<ProbeResult> Agent::Impl::held_failures(std::uint32_t index, const Roster& roster) const {
  const std::optional<gossip::HeldRecord> held = core_.report_of(index);
  if (!held) return {};
  // The core accepted the record: neither decode fails but on a bug.
  auto envelope = decode_envelope_view(held->envelope->raw);
  if (!envelope.ok()) return {};
  auto read = decode_report_failures(envelope->payload, envelope->timestamp_ms);
  if (!read.ok() || read->roster_version != roster.version) return {};
  return std::move(read->failures);
}

void Agent::Impl::note_heard(const gossip::Effects& effects, UnixMs now) {
  const Roster* roster = core_.roster();
  const std::optional<std::uint32_t> self = core_.self_index();
  if (roster == nullptr || !self) return;
  for (std::uint32_t index : effects.reports_changed) {
    if (index == *self || index >= roster->servers.size()) continue;
    // Only a fresh report is the member heard: a restarted daemon was once
    // handed, first, frames its peers had queued for it since it went,
    // minutes old, and took its stale view for a warm one (the alert soak H).
    if (!warm_ && now - heard_ms(index) <= effective_stale_after_ms(roster->params, roster->servers.size())) {
      heard_since_start_.insert(roster->servers[index].id);
    }
    // A target we fail and had not heard since the streak began has spoken:
    // probe it again now, so that a living target's failure is confirmed
    // (answered) within seconds instead of at the next interval.
    // A streak short of fail_streak keeps its confirmations' spacing
    // (confirm_spacing_ms): an answer may not pack three failures into a blink,
    // as refutations every few seconds would (meshsim flapping-target: a
    // target unreachable 20 s a minute was unreachable at every node).
    const verdict::TargetStreak* streak = ledger_.find(roster->servers[index].id);
    if (streak != nullptr && streak->fail_streak > 0 && !streak->answered &&
        heard_ms(index) >= streak->failing_since_ms) {
      ScheduledTarget* target = schedule_.find(index);
      if (target != nullptr && target->in_flight == 0) {
        const UnixMs spaced = streak->fail_streak >= roster->params.fail_streak
                                  ? now
                                  : confirm_spacing_ms(streak->fail_streak, roster->params.fail_streak,
                                                       streak_started(*target, target->requested_ms),
                                                       target->requested_ms);
        schedule_.bring_forward(*target, std::max(now, spaced));
      }
    }
    for (const ProbeResult& failure : held_failures(index, *roster)) {
      // Unanswered since before our last report: it will hear that one.
      if (failure.target == *self && failure.unanswered_since_ms > last_report_ms_) refute_due_ = true;
      note_failure_heard(index, failure, now);
    }
  }
}

void Agent::Impl::note_compatriot_failures(const gossip::Effects& effects, UnixMs now) {
  const Roster* roster = core_.roster();
  const std::optional<std::uint32_t> self = core_.self_index();
  if (roster == nullptr || !self || config_.tls_every == 0) return;
  const std::string& country = roster->servers[*self].country;
  for (std::uint32_t index : effects.reports_changed) {
    if (index == *self || roster->servers[index].country != country) continue;
    for (const ProbeResult& failure : held_failures(index, *roster)) {
      if (!is_tls_stage(failure.reason) || failure.target >= tls_hints_.size()) continue;
      // A compatriot's clock ahead of ours would keep a hint newer than
      // every TLS probe we make: no later than its arrival.
      const UnixMs probed = std::min(failure.last_probe_ms, now);
      tls_hints_[failure.target] = std::max(tls_hints_[failure.target], probed);
    }
  }
}

void Agent::Impl::on_roster_changed(AgentEffects& out) {
  out.roster_changed = true;
  volume_.set_cap(effective_cap());
  const Roster& roster = *core_.roster();
  std::vector<std::string> before;
  for (const auto& streak : ledger_.streaks()) before.push_back(streak.id);
  ledger_.retain_only(roster);
  for (const std::string& id : before) {
    if (ledger_.find(id) != nullptr) continue;
    out.store.erase_state.push_back(streak_key(id));
    std::erase(dirty_streaks_, id);
  }
  feed_.roster_changed();
  tls_hints_.assign(roster.servers.size(), std::numeric_limits<UnixMs>::min());
  targets_roster_.reset();  // the next tick re-plans
  meaning_dirty_ = true;    // the view moves to the new roster's indices
}

Status<AgentError> Agent::Impl::restore_state(const StoredState& stored, UnixMs now) {
  verdict::ProbeLedger ledger;
  for (const auto& [key, value] : stored.state) {
    if (auto target = streak_target(key)) {
      auto streak = decode_streak(*target, value);
      if (!streak || !ledger.restore(*streak)) {
        return make_error(AgentError::corrupt_state,
                          "agent state '" + key + "': not a probe streak of format 1");
      }
    } else if (key == kVolumeKey) {
      auto record = decode_volume(value);
      if (!record) {
        return make_error(AgentError::corrupt_state,
                          "agent state '" + key + "': not a volume account of format 1");
      }
      volume_.restore(*record, now);
    } else if (key == kFlapsKey) {
      auto flaps = FlapHistory::decode(value);
      if (!flaps) {
        return make_error(AgentError::corrupt_state,
                          "agent state '" + key + "': not a flap history of format 1");
      }
      flaps_ = std::move(*flaps);
    }
  }
  ledger_ = std::move(ledger);
  return Ok{};
}

const std::vector<std::uint32_t>& Agent::Impl::current_targets(UnixMs now) {
  std::shared_ptr<const Roster> roster = core_.shared_roster();
  const auto self = core_.self_index();
  if (roster == nullptr || !self) {
    targets_roster_.reset();
    targets_.clear();
    assigned_.clear();
    pacing_targets_ = 0;
    return targets_;
  }
  const std::size_t servers = roster->servers.size();
  const std::uint64_t epoch = verdict::epoch_of(now, roster->params, servers);
  const bool warmup = verdict::in_warmup_before_switch(now, roster->params, servers);
  if (roster == targets_roster_ && epoch == targets_epoch_ && warmup == targets_warmup_) {
    return targets_;
  }
  auto current = plans_.plan(roster, epoch);
  auto next = warmup ? plans_.plan(roster, epoch + 1) : current;
  targets_ = verdict::probe_targets(*current, *next, *self, now, roster->params);
  // Pacing plans for a day: the next epoch's extra targets are probed only
  // in the warm-up before each switch, so they weigh that share of a day.
  assigned_ = current->targets(*self);
  std::sort(assigned_.begin(), assigned_.end());
  const std::size_t steady = assigned_.size();
  const std::size_t extra = targets_.size() - steady;
  const DurationMs warmup_window_ms = verdict::warmup_ms(roster->params, servers);
  const auto epoch_ms = static_cast<std::uint64_t>(effective_epoch_ms(roster->params, servers));
  pacing_targets_ = steady + static_cast<std::size_t>(
                                 (extra * static_cast<std::uint64_t>(warmup_window_ms) + epoch_ms - 1) / epoch_ms);
  if (epoch != targets_epoch_ || roster != targets_roster_) meaning_dirty_ = true;
  targets_roster_ = roster;
  targets_epoch_ = epoch;
  targets_warmup_ = warmup;
  schedule_.set_targets(*roster, targets_, now);
  // TLS turns by the plan that makes this node a witness (the current one
  // first), and their average period for the pacing; the probe slots'
  // phases by the same rank (node/agent/probe_schedule.h).
  const DurationMs interval = probe_interval_ms_ > 0 ? probe_interval_ms_ : roster->params.probe_interval_ms;
  const CountryPlace place = country_place(*roster, roster->servers[*self].country);
  std::uint64_t share_milli = 0;
  for (ScheduledTarget& target : schedule_.targets()) {
    const verdict::WitnessPlan& plan = current->is_witness(*self, target.index) ? *current : *next;
    target.turn = tls_turn_of(plan, *roster, *self, target.index);
    target.base_phase = probe_base_phase(target.id);
    schedule_.set_phase(target, probe_phase(target.id, place, target.turn), now, interval);
    share_milli += 1'000 / target.turn.turns;
  }
  tls_period_ = config_.tls_every == 0 || share_milli == 0
                    ? 0
                    : static_cast<std::uint32_t>(std::max<std::uint64_t>(
                          1, config_.tls_every * 1'000 * targets_.size() / share_milli));
  return targets_;
}

// ---- Agent: the public API ----

Agent::Agent(AgentConfig config, std::uint64_t seed, AgentShared shared)
    : impl_(std::make_unique<Impl>(std::move(config), seed, shared)) {}
Agent::~Agent() = default;

Result<AgentEffects, AgentError> Agent::start(const StoredState& stored, UnixMs now) {
  MESH_CHECK(!impl_->started_, "Agent::start called twice");
  auto restored = impl_->restore_state(stored, now);
  if (!restored.ok()) return restored.error();
  impl_->started_ = true;
  impl_->started_ms_ = now;
  impl_->volume_.roll(now);
  AgentEffects out;
  impl_->absorb(impl_->core_.load(stored.records, now), out, now);
  return out;
}

Result<AgentEffects, RecordError> Agent::offer_record(ByteView raw, UnixMs now) {
  impl_->volume_.roll(now);
  auto published = impl_->core_.publish(raw, now);
  if (!published.ok()) return published.error();
  AgentEffects out;
  impl_->absorb(std::move(published.value()), out, now);
  return out;
}

AgentEffects Agent::on_frame(ByteView frame, UnixMs now) {
  impl_->volume_.roll(now);
  impl_->volume_.add_received(frame_wire_bytes(frame.size()));
  AgentEffects out;
  gossip::Effects effects = impl_->core_.on_message(frame, now);
  impl_->watch_clock(effects, now);
  impl_->note_compatriot_failures(effects, now);
  impl_->note_heard(effects, now);
  impl_->absorb(std::move(effects), out, now);
  impl_->publish_refutation(now, out);
  return out;
}

void Agent::on_link_failed(std::string_view peer, UnixMs now) { impl_->core_.on_link_failed(peer, now); }

bool Agent::warming(UnixMs now) const { return impl_->warming(now); }

void Agent::set_alert_sender(bool sender) {
  if (impl_->alert_sender_ == sender) return;
  impl_->alert_sender_ = sender;
  impl_->meaning_dirty_ = true;
}

void Agent::on_link_up(std::string_view peer, UnixMs now) { impl_->core_.on_link_up(peer, now); }

AgentEffects Agent::on_tick(UnixMs now) {
  Impl& impl = *impl_;
  impl.volume_.roll(now);
  AgentEffects out;
  impl.absorb(impl.core_.on_tick(now), out, now);
  impl.tick_reports(now, out);
  impl.publish_refutation(now, out);
  impl.tick_probes(now, out);
  impl.tick_verdicts(now, out);
  impl.store_volume(out, false);
  return out;
}

AgentEffects Agent::on_probe_outcome(const ProbeOutcome& outcome, UnixMs now) {
  impl_->volume_.roll(now);
  impl_->record_outcome(outcome, now);
  AgentEffects out;
  // A probe got through: the network path to that host works, whatever
  // gossip found lately (docs/PROTOCOL.md §4a, "Revived").
  if (outcome.failure == ProbeFailure::none) out.paths_healing = impl_->core_.on_path_hint(outcome.target, now);
  impl_->publish_if_changed(now, out);
  impl_->store_volume(out, false);
  return out;
}

// A requested self-check's result: the report is published when the
// heartbeat is due, at once when the self-check itself flipped (a service
// that went down is news), and otherwise when the report's meaning changed
// and the change gap allows.
AgentEffects Agent::on_self_check(const SelfCheckOutcome& outcome, UnixMs now) {
  Impl& impl = *impl_;
  impl.volume_.roll(now);
  AgentEffects out;
  if (!impl.self_check_pending_) return out;
  impl.self_check_pending_ = false;
  const bool flipped = !impl.last_self_check_ || impl.last_self_check_->self_check != outcome.self_check;
  impl.note_flap(outcome.self_check, now, out);
  impl.last_self_check_ = outcome;
  const bool heartbeat = !impl.next_heartbeat_ms_ || now >= *impl.next_heartbeat_ms_;
  if (flipped) impl.meaning_dirty_ = true;
  if (heartbeat || (flipped && impl.meaning_changed(now))) {
    impl.publish_report(outcome, now, out);
  } else {
    impl.publish_if_changed(now, out);
  }
  return out;
}

void Agent::on_clock_jump(DurationMs delta_ms) {
  Impl& impl = *impl_;
  impl.ledger_.shift(delta_ms);
  for (const auto& streak : impl.ledger_.streaks()) impl.dirty_streaks_.push_back(streak.id);
  // The agent's own timers move too: a step back must not silence reports
  // or probes for as long as the step, nor a step forward fire them in a burst.
  impl.schedule_.shift(delta_ms);
  if (impl.next_self_check_ms_) *impl.next_self_check_ms_ += delta_ms;
  // The node's records signed before the step carried the wrong time (a
  // clock that was ahead signed records the fleet refused as future): a
  // heartbeat at once, instead of at the next point of the grid.
  if (impl.next_heartbeat_ms_) impl.next_heartbeat_ms_ = std::numeric_limits<UnixMs>::min();
  if (impl.last_report_ms_ != std::numeric_limits<UnixMs>::min()) impl.last_report_ms_ += delta_ms;
  if (impl.last_change_ms_ != std::numeric_limits<UnixMs>::min()) impl.last_change_ms_ += delta_ms;
  if (impl.last_first_failure_ms_ != std::numeric_limits<UnixMs>::min()) impl.last_first_failure_ms_ += delta_ms;
  if (impl.last_evaluation_ms_ != std::numeric_limits<UnixMs>::min()) impl.last_evaluation_ms_ += delta_ms;
}

AgentEffects Agent::flush(UnixMs now) {
  AgentEffects out;
  impl_->volume_.roll(now);
  impl_->store_streaks(out, false);
  impl_->store_volume(out, true);
  return out;
}

verdict::Evaluation Agent::evaluate(UnixMs now) { return impl_->evaluate(now); }

std::vector<std::uint32_t> Agent::probe_targets(UnixMs now) { return impl_->current_targets(now); }

const gossip::GossipCore& Agent::core() const { return impl_->core_; }
const Roster* Agent::roster() const { return impl_->core_.roster(); }
const verdict::ProbeLedger& Agent::ledger() const { return impl_->ledger_; }
VolumeStatus Agent::volume() const { return impl_->volume_.status(); }
ClockState Agent::clock(UnixMs now) const {
  const Roster* roster = impl_->core_.roster();
  return roster == nullptr ? ClockState{} : impl_->clock_.state(now, roster->params);
}

const AgentCounters& Agent::counters() const { return impl_->counters_; }
std::shared_ptr<const verdict::Evaluation> Agent::verdicts() const { return impl_->snapshot_; }

}  // namespace mesh::agent
