// The daemon: carrying out the agent's effects, in the order the agent
// requires (store, then send, probe, self-check), and feeding back what the
// prober and the self-checker find. Everything here runs on the strand.
#include <boost/asio/post.hpp>

#include <algorithm>

#include "node/daemon_impl.h"
#include "node/api/router.h"
#include "node/data_dir_check.h"
#include "node/log.h"
#include "node/verdict_log.h"
#include "record/envelope.h"

namespace mesh::node {

void Daemon::apply(agent::AgentEffects&& effects) {
  if (stopping_) return;
  // Nothing that depends on the batch leaves before it is durable.
  if (!effects.store.empty() && !store_->apply(effects.store)) {
    log_event(LogLevel::error, "storage",
              "cannot write to the data dir, stopping: " +
                  explain_storage_error(config_.data_dir, store_->last_error()));
    shutdown(kExitFailure, false);
    return;
  }
  if (effects.roster_changed) on_roster_changed();
  if (const Roster* roster = agent_->roster(); roster != nullptr) {
    for (gossip::Outgoing& out : effects.send) {
      const ServerEntry& peer = roster->servers[out.to];
      transport_->send(peer.id, peer.gossip, std::move(out.frame));
    }
  }
  if (effects.paths_healing) transport_->retry_now();
  for (const agent::ProbeRequest& request : effects.probes) start_probe(request);
  if (effects.self_check_due) run_self_check();
  if (effects.verdicts) {
    for (const LogLine& line : verdict_transitions(logged_verdicts_.get(), *effects.verdicts, &unheard_)) {
      log_event(line.level, line.event, line.message, line.fields);
    }
    logged_verdicts_ = effects.verdicts;
  }
}

// A frame a member sealed, on a connection it opened to us: frames for it
// may go back on that connection (docs/PROTOCOL.md §2a, "Connections").
void Daemon::on_frame(const Bytes& frame, InboundId inbound) {
  if (stopping_) return;
  agent::AgentEffects effects = agent_->on_frame(frame, wall_now());
  const Roster* roster = agent_->roster();
  if (inbound != 0 && !effects.frame_sender.empty() && roster != nullptr) {
    if (const ServerEntry* peer = roster->find(effects.frame_sender)) {
      transport_->adopt(inbound, peer->id, peer->gossip);
    }
  }
  apply(std::move(effects));
}

void Daemon::start_probe(const agent::ProbeRequest& request) {
  prober_->start(request, [this](agent::ProbeOutcome outcome) {
    boost::asio::post(strand_, [this, outcome = std::move(outcome)] {
      if (stopping_) return;  // a cancelled probe says nothing about its target
      note_probe(outcome);
      probe_stats_.record(outcome);
      apply(agent_->on_probe_outcome(outcome, wall_now()));
    });
  });
}

void Daemon::run_self_check() {
  if (!self_checker_) {
    // Not a member of the roster (or none held): nothing to check yet.
    return;
  }
  self_checker_->run([this](agent::SelfCheckOutcome outcome) {
    boost::asio::post(strand_, [this, outcome = std::move(outcome)] {
      if (stopping_) return;
      note_self_check(outcome);
      apply(agent_->on_self_check(outcome, wall_now()));
    });
  });
}

// The links to peers that left, and the self-check's listener (this node's
// probe endpoint in the roster unless the config names one).
void Daemon::on_roster_changed() {
  const Roster& roster = *agent_->roster();
  std::vector<ServerId> members;
  for (const ServerEntry& server : roster.servers) {
    if (server.id != config_.node_id) members.push_back(server.id);
  }
  transport_->retain_peers(members);
  const ServerEntry* self = roster.find(config_.node_id);
  log_event(LogLevel::info, "roster",
            "roster version " + std::to_string(roster.version) + " accepted: " +
                std::to_string(roster.servers.size()) + " servers",
            {{"roster_version", roster.version}, {"servers", roster.servers.size()}});
  check_membership_in(roster);
  if (self == nullptr) {
    self_checker_.reset();
    self_check_target_.reset();
    return;
  }
  const Endpoint listener = config_.self_check.listener.value_or(self->probe);
  const auto target = std::make_pair(listener, self->sni);
  if (self_checker_ && self_check_target_ == target) return;
  SelfCheckSettings settings;
  settings.listener = listener;
  settings.listener_tls = config_.self_check.listener_tls;
  settings.listener_sni = self->sni;
  settings.service = parse_service_spec(config_.self_check.service).value();
  settings.exec_timeout_ms = config_.self_check.exec_timeout_ms;
  settings.data_dir = config_.data_dir;
  if (self_checker_) self_checker_->shutdown();
  self_checker_ = std::make_unique<SelfChecker>(io_, settings);
  self_check_target_ = target;
}

// One line when a target's probes start failing, change reason, or recover.
void Daemon::note_probe(const agent::ProbeOutcome& outcome) {
  auto it = probe_failing_.find(outcome.target);
  const bool failed = outcome.failure != ProbeFailure::none;
  if (failed && (it == probe_failing_.end() || it->second != outcome.failure)) {
    log_event(LogLevel::info, "probe_failure",
              "probes of " + outcome.target + " fail: " + to_string(outcome.failure),
              {{"target", outcome.target}, {"reason", to_string(outcome.failure)},
               {"tls", outcome.tls}});
    probe_failing_[outcome.target] = outcome.failure;
  } else if (!failed && it != probe_failing_.end()) {
    log_event(LogLevel::info, "probe_failure", "probes of " + outcome.target + " succeed again",
              {{"target", outcome.target}, {"reason", "none"}});
    probe_failing_.erase(it);
  }
}

void Daemon::note_self_check(const agent::SelfCheckOutcome& outcome) {
  const SelfCheck& now = outcome.self_check;
  const bool ok = now.listener_ok && now.service_ok;
  const bool was_ok = !last_self_check_ || (last_self_check_->listener_ok && last_self_check_->service_ok);
  if (!ok && (was_ok || last_self_check_->reason != now.reason)) {
    log_event(LogLevel::warn, "self_check", "this server is not well: " + now.reason,
              {{"listener_ok", now.listener_ok},
               {"service_ok", now.service_ok}, {"reason", now.reason}});
  } else if (ok && !was_ok) {
    log_event(LogLevel::info, "self_check", "listener and service are well again",
              {{"listener_ok", true}, {"service_ok", true}});
  }
  last_self_check_ = now;
}

// Gossip links down or up again, and the volume account getting tight.
void Daemon::log_status() {
  for (const PeerLinkStats& link : transport_->stats().peers) {
    const bool down = !link.connected && link.connect_failures_in_row > 0;
    bool& was_down = link_down_[link.peer];
    if (down && !was_down) {
      was_down = true;
      log_event(LogLevel::warn, "gossip_link",
                "link to " + link.peer + " (" + format_endpoint(link.endpoint) + ") is down: " +
                    std::to_string(link.connect_failures_in_row) + " failed connects",
                {{"peer", link.peer}, {"up", false}});
    } else if (was_down && link.connected) {
      was_down = false;
      log_event(LogLevel::info, "gossip_link", "link to " + link.peer + " is up again",
                {{"peer", link.peer}, {"up", true}});
    }
  }
  const agent::VolumeStatus volume = agent_->volume();
  if (volume.tight != volume_tight_) {
    volume_tight_ = volume.tight;
    log_event(volume.tight ? LogLevel::warn : LogLevel::info, "volume",
              volume.tight ? "daily volume cap is tight: probes slowed to one every " +
                                 std::to_string(volume.probe_interval_ms / 1000) + " s per target (" +
                                 std::to_string(volume.charged_bytes) + " of " +
                                 std::to_string(volume.cap_bytes) + " bytes used today)"
                           : "daily volume cap: probes back at the roster's interval",
              {{"used_today", volume.charged_bytes},
               {"cap", volume.cap_bytes}});
  }
}

// The API's snapshot (docs/API.md, "Freshness"): at every tick while the
// API is read (a read within kSnapshotReadersMs), at once when what the
// verdicts show changed, and every kSnapshotIdleMs otherwise: a node nobody
// asks does not render its whole state every second. Held long-polls wake
// when route membership moved.
void Daemon::publish_snapshot() {
  const UnixMs now = wall_now();
  if (snapshots_.take_read()) snapshot_read_ms_ = now;
  auto verdicts = agent_->verdicts();
  const auto before = snapshots_.peek();
  // logged_verdicts_ moves only when what an operator sees changed.
  const bool due = before == nullptr || logged_verdicts_ != published_verdicts_ || problems_changed_ ||
                   now - snapshot_read_ms_ <= kSnapshotReadersMs ||
                   now - before->taken_ms >= kSnapshotIdleMs || now < before->taken_ms ||
                   before->starting != starting(now);
  if (!due) return;
  problems_changed_ = false;
  if (membership_changed(indexed_verdicts_.get(), verdicts.get())) {
    ++api_index_;
    indexed_verdicts_ = verdicts;
  }
  published_verdicts_ = logged_verdicts_;
  const TransportStats transport = transport_->stats();
  SnapshotInputs inputs{config_.node_id, MESHNODE_VERSION, now, api_index_, agent_.get(),
                        &transport, &probe_stats_, started_ms_, starting(now), problems_.all(),
                        std::nullopt, std::nullopt};
  if (panel_ && panel_->panel_on()) inputs.panel_sync = panel_->sync_status();
  if (panel_ && panel_->alerts_on()) inputs.alerts = panel_->alert_status();
  snapshots_.publish(build_api_snapshot(inputs));
  if (before == nullptr || before->index != api_index_) api_->notify();
}

// PUT /v1/roster: the same path as the roster file; the answer says why.
void Daemon::offer_roster(std::string raw, std::function<void(api::ApiResponse)> reply) {
  if (stopping_) return reply(api::error_response(503, "stopping", "the node is stopping"));
  // The agent takes any valid record: a node's report put here would be
  // spread as if gossip had brought it.
  if (auto envelope = decode_envelope_view(as_bytes(raw)); envelope && envelope->kind != RecordKind::roster) {
    log_event(LogLevel::warn, "roster", "a record from the API refused: not a roster",
              {{"reason", "not_a_roster"}, {"kind", to_string(envelope->kind)}});
    return reply(api::roster_refused(false, "not a roster: a " + std::string(to_string(envelope->kind)) +
                                                " record of '" + std::string(envelope->origin) + "'"));
  }
  auto offered = agent_->offer_record(as_bytes(raw), wall_now());
  if (!offered) {
    log_event(LogLevel::warn, "roster", "roster from the API refused: " + offered.message(),
              {{"reason", to_string(offered.code())}});
    return reply(api::roster_refused(offered.code() == RecordError::stale,
                                     "roster refused (" + std::string(to_string(offered.code())) +
                                         "): " + offered.message()));
  }
  apply(std::move(offered.value()));
  const Roster& roster = *agent_->roster();
  log_event(LogLevel::info, "roster", "roster version " + std::to_string(roster.version) + " from the API",
            {{"roster_version", roster.version}});
  reply(api::roster_accepted(roster.version, roster.servers.size()));
}

}  // namespace mesh::node
