// Internal: the state behind Agent (agent.h), split over agent.cc (the API,
// start, records and frames), agent_tick.cc (the timers: reports, probes,
// verdicts) and agent_report.cc (self-checks, probe outcomes, the report).
#pragma once

#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "common/rng.h"
#include "node/agent/agent.h"
#include "node/agent/clock_watch.h"
#include "node/agent/flap_history.h"
#include "node/agent/probe_schedule.h"
#include "node/agent/report_meaning.h"
#include "node/agent/verdict_feed.h"

namespace mesh::agent {

class Agent::Impl {
 public:
  Impl(AgentConfig config, std::uint64_t seed, AgentShared shared);

  // agent.cc
  // Moves the core's effects into `out`: frames that fit the volume cap,
  // records to store, and what changed (roster, reports).
  void absorb(gossip::Effects&& effects, AgentEffects& out, UnixMs now);
  void on_roster_changed(AgentEffects& out);
  // Feeds the reports accepted from the network, and the core's future-dated
  // refusals, to the clock watch.
  void watch_clock(const gossip::Effects& effects, UnixMs now);
  // Notes the TLS-stage failures in the reports of compatriots (servers of
  // this node's country) accepted from the network at `now`: tls_hints_.
  void note_compatriot_failures(const gossip::Effects& effects, UnixMs now);
  // Reports accepted from the network: a witness that says it has not
  // heard from this node since failing it is answered with a report
  // (refute_due_, docs/PROTOCOL.md "When a node reports").
  void note_heard(const gossip::Effects& effects, UnixMs now);
  // The timestamp of the latest report held of the server at `index` (0: none).
  UnixMs heard_ms(std::uint32_t index) const;
  // The failures in the report held of the server at `index`, when it is
  // of `roster`'s version (none otherwise).
  std::vector<ProbeResult> held_failures(std::uint32_t index, const Roster& roster) const;
  // Publishes the answer to a silence claim when one is due and the last
  // answer is at least change_gap() old.
  void publish_refutation(UnixMs now, AgentEffects& out);
  // A self-check result: a change between healthy and failing goes into
  // the flap history (stored).
  void note_flap(const SelfCheck& self_check, UnixMs now, AgentEffects& out);
  // The time verdicts are evaluated at: `now`, or the fleet's time when this
  // node's clock runs ahead of it (ClockWatch).
  UnixMs fleet_time(UnixMs now) const;
  std::uint64_t effective_cap() const;
  Status<AgentError> restore_state(const StoredState& stored, UnixMs now);
  // The targets of this node at `now` (cached per roster, epoch and warm-up).
  const std::vector<std::uint32_t>& current_targets(UnixMs now);

  // agent_tick.cc
  void tick_reports(UnixMs now, AgentEffects& out);
  void tick_probes(UnixMs now, AgentEffects& out);
  void tick_verdicts(UnixMs now, AgentEffects& out);
  verdict::Evaluation evaluate(UnixMs now);

  // agent_confirm.cc (node/agent/confirmation.h)
  // After an outcome of `target_id` (its probe requested at `requested_ms`)
  // left `streak` (null: none): a failure short of fail_streak is confirmed
  // soon, within the target's rounds.
  void confirm_failure(std::string_view target_id, const verdict::TargetStreak* streak,
                       UnixMs requested_ms, UnixMs now);
  // A failure read in a report of the server at roster index `origin`: a
  // fresh one still on its way brings this node's probe of its target
  // forward, within the target's rate limit.
  void note_failure_heard(std::uint32_t origin, const ProbeResult& failure, UnixMs now);
  // Brings the probe of `target` (null: none) forward, within its rate
  // limit, unless probed since `since_ms` or failing already; a streak it
  // begins counts its span from `anchor_ms` (0: its own start).
  bool trigger_probe(ScheduledTarget* target, UnixMs since_ms, UnixMs now, UnixMs anchor_ms);
  // A round began for `failing`: probes of this node's other targets now,
  // within their rate limits.
  void sweep_targets(const ScheduledTarget& failing, UnixMs since_ms, UnixMs now);

  // agent_report.cc
  void record_outcome(const ProbeOutcome& outcome, UnixMs now);
  void publish_report(const SelfCheckOutcome& outcome, UnixMs now, AgentEffects& out);
  // The view this node's report would carry at `now`.
  ProbeView current_view(UnixMs now);
  // What a report of `self_check` and `view` published at `now` means.
  ReportMeaning meaning_at(const SelfCheck& self_check, const ProbeView& view, UnixMs now) const;
  // Agent::warming: not yet warm_, and still_warming(now).
  bool warming(UnixMs now) const { return !warm_ && still_warming(now); }
  // Within warm_up_ms of the start, and some other member was not heard
  // since the start (warm_up.h).
  bool still_warming(UnixMs now) const;
  // Whether the report this node would publish now means something other
  // than the last one published (true before the first).
  bool meaning_changed(UnixMs now);
  // Publishes a changed meaning when change_gap() allows, with the last
  // self-check's result.
  void publish_if_changed(UnixMs now, AgentEffects& out);
  // Change-driven reports are at least this far apart: a mass block turns
  // many targets at once, a flapping one turns at every probe.
  DurationMs change_gap() const;
  void store_streaks(AgentEffects& out, bool all);
  void compact_dirty_streaks();  // sorted, without repeats
  void store_volume(AgentEffects& out, bool exact);

  AgentConfig config_;
  Rng rng_;
  gossip::GossipCore core_;
  PlanCache own_plans_;
  PlanSource& plans_;
  verdict::ProbeLedger ledger_;
  ProbeSchedule schedule_;
  VolumeBudget volume_;
  VerdictFeed feed_;
  ClockWatch clock_;
  AgentCounters counters_;
  bool started_ = false;
  UnixMs started_ms_ = 0;  // the `now` of Agent::start
  // Members whose report this node received since its start (not read
  // from its store): warm_up.h. Dropped once warm_.
  std::unordered_set<ServerId> heard_since_start_;
  bool warm_ = false;  // warmed up once: never warming again until a restart
  bool alert_sender_ = false;  // Agent::set_alert_sender's

  // Reports (docs/PROTOCOL.md, "When a node reports"): a self-check every
  // probe_interval_ms / 4; a report when what it means changes (at most one per
  // change_gap()), and a heartbeat report heartbeat_interval_ms after the
  // last one otherwise.
  std::optional<UnixMs> next_self_check_ms_;
  std::optional<UnixMs> next_heartbeat_ms_;  // set by each report published
  std::optional<DurationMs> heartbeat_phase_ms_;  // this node's shift of the heartbeat grid
  bool self_check_pending_ = false;
  std::optional<SelfCheckOutcome> last_self_check_;
  // The node's own flapping, published in its reports (flap_history.h).
  FlapHistory flaps_;
  std::optional<ReportMeaning> published_meaning_;
  bool meaning_dirty_ = false;   // something that may change the meaning happened
  bool change_pending_ = false;  // the meaning changed; waits for change_gap()
  // `now` of the last report whose meaning changed: reports of changes are
  // change_gap() apart; a heartbeat (same meaning) does not hold one back.
  UnixMs last_change_ms_ = std::numeric_limits<UnixMs>::min();
  UnixMs last_report_ms_ = std::numeric_limits<UnixMs>::min();   // its timestamp
  // A witness's failure of this node is unanswered since after our last
  // report (it has not heard from us since its failures began): answer
  // with a report of ours, at most one per change_gap().
  bool refute_due_ = false;
  UnixMs last_refutation_ms_ = std::numeric_limits<UnixMs>::min();
  // A target's first failure is published at once, past the change gap
  // (others confirm it: confirmation.h), at most one such report per
  // kFirstFailureGapMs (or per gap when shorter).
  bool first_failure_due_ = false;
  UnixMs last_first_failure_ms_ = std::numeric_limits<UnixMs>::min();
  // A streak that became a vote (or a silence claim) likewise, at most one
  // such report per gap.
  bool vote_due_ = false;
  UnixMs last_vote_ms_ = std::numeric_limits<UnixMs>::min();

  // Probes.
  std::uint64_t next_probe_id_ = 1;
  DurationMs probe_interval_ms_ = 0;  // paced (volume), refreshed each tick
  // Ids whose streak changed since last stored, with repeats (every probe
  // outcome appends; store_streaks sorts and dedupes): appending to a vector
  // is what a probe outcome can afford, a tree insert was not (perf, meshsim
  // at N = 1000: 6% of the run).
  std::vector<std::string> dirty_streaks_;

  // Targets, cached per (roster, epoch, warm-up).
  std::shared_ptr<const Roster> targets_roster_;
  std::uint64_t targets_epoch_ = 0;
  bool targets_warmup_ = false;
  std::vector<std::uint32_t> targets_;
  std::vector<std::uint32_t> assigned_;  // of targets_, the current epoch's (sorted)
  // The targets the volume pacing plans for: the current epoch's, plus the
  // next epoch's extra ones weighted by the share of a day they are probed.
  std::size_t pacing_targets_ = 0;
  // Of the targets, probes per TLS probe while all get through (tls_every x
  // the compatriot witnesses, harmonic mean), for pacing; 0: no TLS.
  std::uint32_t tls_period_ = 0;
  // By roster index: the probe time of the newest TLS-stage failure a
  // compatriot reported for the server (tls_turns.h); min: none.
  std::vector<UnixMs> tls_hints_;

  // Verdicts.
  std::shared_ptr<const verdict::Evaluation> snapshot_;
  UnixMs last_evaluation_ms_ = std::numeric_limits<UnixMs>::min();
};

}  // namespace mesh::agent
