// The run loop and everything a node does on its own timers: core ticks,
// reports, probes, and frames through the network model.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

#include "gossip/link.h"
#include "gossip/pair_connection.h"
#include "node/agent/detection.h"
#include "tools/meshsim/simulator_impl.h"

namespace mesh::sim {
namespace {

// Item::gen of a deliver action is the sender; an injected frame has none.
constexpr std::uint32_t kNoSender = 0xffff'ffff;

// The record's last 8 bytes (the end of its signature): tells records apart
// in the dissemination measurement without decoding them.
std::uint64_t tail_key(const Bytes& raw) {
  std::uint64_t key = 0;
  if (raw.size() >= 8) std::memcpy(&key, raw.data() + raw.size() - 8, 8);
  return key == 0 ? 1 : key;
}

Metrics plausible_metrics(Rng& rng, UnixMs uptime_ms) {
  Metrics m;
  m.cpu_permille = static_cast<std::uint32_t>(50 + rng.below(350));
  m.memory_total_kib = 4ull * 1024 * 1024;
  m.memory_used_kib = m.memory_total_kib * (30 + rng.below(40)) / 100;
  m.disk_total_mib = 80 * 1024;
  m.disk_used_mib = 10 * 1024 + rng.below(30 * 1024);
  m.net_rx_bytes_per_s = rng.below(10'000'000);
  m.net_tx_bytes_per_s = rng.below(10'000'000);
  m.load_average_milli = static_cast<std::uint32_t>(rng.below(3'000));
  m.uptime_s = static_cast<std::uint64_t>(std::max<UnixMs>(uptime_ms, 0) / 1000);
  m.listener_connections = static_cast<std::uint32_t>(rng.below(500));
  return m;
}

}  // namespace

Run::Run(const Scenario& scenario, World world, const RunOptions& options)
    : scenario_(scenario),
      world_(std::move(world)),
      options_(options),
      params_(scenario.params),
      start_ms_(scenario.start_unix_ms),
      now_ms_(scenario.start_unix_ms),
      rng_(mix_seed(scenario.seed, 0x6e6574)),
      network_(world_, scenario),
      streams_(network_) {
  const auto count = static_cast<std::uint32_t>(world_.servers.size());
  std::uint32_t check_nodes = scenario.sim.check_nodes;
  if (check_nodes == 0) check_nodes = count <= 256 ? count : 32;
  check_nodes = std::min(check_nodes, count);
  nodes_.resize(count);
  for (std::uint32_t i = 0; i < count; ++i) {
    SimNode& node = nodes_[i];
    node.index = i;
    node.id = world_.servers[i].spec.id;
    node.key = world_.servers[i].key;
    node.active = world_.servers[i].initial;
    node.metrics_rng.emplace(mix_seed(scenario.seed, 0x6d6574000000ull + i));
    // Evenly spaced: node i is checked when it starts a new 1/check_nodes share.
    node.checked = (std::uint64_t{i} * check_nodes) / count !=
                   (std::uint64_t{i + 1} * check_nodes) / count;
  }
  for (const Event& event : scenario.events) {
    bool restarts = event.kind == EventKind::stop_agent || event.kind == EventKind::start_agent ||
                    event.kind == EventKind::node_down || event.kind == EventKind::node_up;
    if (!restarts) continue;
    std::vector<bool> named = network_.resolve(event.servers);
    for (std::uint32_t i = 0; i < count; ++i) nodes_[i].persistence |= named[i];
  }
  rosters_[1] = world_.initial_roster;
  roster_records_[1] = sign_roster(world_, world_.initial_roster, start_ms_);
  open_record_of_origin_.assign(count, 0);
  DurationMs max_skew = 0;
  for (const Event& event : scenario.events) max_skew = std::max(max_skew, std::abs(event.skew_ms));
  // A verdict may lag the truth by the detection bound, and a skewed clock
  // stretches it by the skew (docs/SIMULATOR.md, "Checks").
  missed_after_ms_ = agent::detection_bound_ms(params_);
  false_grace_ms_ = missed_after_ms_ + max_skew;
  result_.false_verdict_grace_ms = false_grace_ms_;
  result_.detection_bound_ms = missed_after_ms_;
  result_.checked_nodes = check_nodes;
}

void Run::schedule(UnixMs at, Action action, std::uint32_t node, std::uint32_t gen,
                   std::uint32_t arg) {
  queue_.push(Item{at, next_seq_++, action, node, gen, arg});
}

RunResult Run::execute() {
  for (SimNode& node : nodes_) {
    if (node.active) start_agent(node, true);
  }
  for (std::uint32_t i = 0; i < scenario_.events.size(); ++i) {
    schedule(start_ms_ + scenario_.events[i].at_ms, Action::scenario_event, 0, 0, i);
  }
  schedule_checks();
  const DurationMs measure_from = std::min(scenario_.sim.measure_from_ms, scenario_.duration_ms / 2);
  schedule(start_ms_ + measure_from, Action::measure_start);
  const UnixMs end_ms = start_ms_ + scenario_.duration_ms;
  while (!queue_.empty()) {
    Item item = queue_.top();
    if (item.at > end_ms) break;
    queue_.pop();
    now_ms_ = item.at;
    SimNode& node = nodes_[item.node];
    const bool current = item.gen == node.generation && node.running();
    switch (item.action) {
      case Action::scenario_event: apply_event(scenario_.events[item.arg]); break;
      case Action::tick: if (current) on_tick(node); break;
      case Action::probe_result:
        if (current) on_probe_result(node, item.arg);
        else free_outcomes_.push_back(item.arg);  // the agent that asked is gone
        break;
      case Action::deliver: on_deliver(node, item.arg, item.gen); break;
      case Action::check:
        on_check(item.arg & 1, item.gen == 0 ? std::nullopt : std::optional<std::size_t>(item.gen - 1));
        break;
      case Action::digest_check: on_digest_check(item.arg); break;
      case Action::measure_start: start_measuring(); break;
      case Action::link_failed:
        failure_pending_.erase(std::uint64_t{item.node} << 32 | item.arg);
        if (current) on_link_failed(node, item.arg);
        break;
      case Action::link_up:
        if (current) on_link_up(node, item.arg);
        break;
    }
  }
  now_ms_ = end_ms;
  finish_metrics();
  finish_expectations();
  return std::move(result_);
}

// ---- agent life cycle ----

void Run::start_agent(SimNode& node, bool fresh_install) {
  ++node.generation;
  ++node.boot_counter;
  node.agent_running = true;
  if (node.agent) add_counters(node.retired, node.agent->core().counters());
  agent::AgentConfig config;
  config.core.self = node.id;
  config.core.node_key = node.key.secret_key;
  config.core.operator_key = world_.operator_key.public_key;
  config.core.boot_counter = node.boot_counter;
  config.core.tick_interval_ms = scenario_.sim.tick_interval_ms;
  config.core.overlay_rings = scenario_.sim.overlay_rings;
  config.core.sync_interval_ms = scenario_.sim.sync_interval_ms;
  // Only checked nodes' verdicts are read: the others check every payload
  // at acceptance but need not hold N decoded reports (docs/SIMULATOR.md, Performance).
  config.core.hold_decoded_reports = node.checked;
  config.verdict_refresh_ms = 0;  // evaluated at checks (Agent::evaluate)
  config.tls_every = scenario_.sim.tls_every;
  node.agent = std::make_unique<agent::Agent>(
      config, mix_seed(scenario_.seed, (std::uint64_t{node.index} << 20) + node.boot_counter),
      agent::AgentShared{gossip::SharedWork{&verifier_, &roster_memo_, &record_memo_}, &plan_memo_});
  agent::StoredState stored;
  if (node.persistence) stored = std::move(node.store.load().value());
  auto started = node.agent->start(stored, node.clock(now_ms_));
  MESH_CHECK(started.ok(), "a simulated node's stored state does not load");
  apply_effects(node, std::move(started.value()));
  // The operator installs the current roster with the daemon (meshctl); a
  // restarted daemon has it from storage.
  if (fresh_install || node.agent->roster() == nullptr) {
    publish_record(node, roster_records_.rbegin()->second, false);
  }
  const DurationMs tick = scenario_.sim.tick_interval_ms;
  schedule(now_ms_ + static_cast<DurationMs>(rng_.below(tick)) + 1, Action::tick, node.index, node.generation);
}

void Run::stop_agent(SimNode& node) {
  node.agent_running = false;
  streams_.close_all(node.index);
  ++node.generation;
}

// ---- the agent's effects, carried out by the simulated machine ----

void Run::on_tick(SimNode& node) {
  schedule(now_ms_ + scenario_.sim.tick_interval_ms, Action::tick, node.index, node.generation);
  apply_effects(node, node.agent->on_tick(node.clock(now_ms_)));
}

void Run::apply_effects(SimNode& node, agent::AgentEffects&& effects) {
  // What the node stored: the dissemination measurement counts every node
  // that holds a record; only nodes that restart keep a storage model.
  if (effects.published) note_published(node, *effects.published);
  for (const auto& record : effects.store.put_records) track_persisted(*record.raw);
  if (node.persistence && !effects.store.empty()) {
    MESH_CHECK(node.store.apply(effects.store).ok(), "the in-memory store refused a batch");
  }
  if (!effects.send.empty()) {
    const auto& world = world_indices(*node.agent->roster());
    for (gossip::Outgoing& out : effects.send) send_frame(node, world[out.to], std::move(out.frame));
  }
  for (const agent::ProbeRequest& request : effects.probes) run_probe(node, request);
  if (effects.self_check_due) answer_self_check(node);
}

// The report the agent just signed: the dissemination measurement tracks
// it, and a healthy one counts towards the report-size figures.
void Run::note_published(SimNode& node, const Bytes& raw) {
  track_record(node, raw);
  auto envelope = decode_envelope_view(raw);
  if (envelope.ok()) {
    if (signed_.size() < nodes_.size()) signed_.resize(nodes_.size());
    signed_[node.index].push_back(Signed{now_ms_, envelope->timestamp_ms, envelope->seq});
  }
  const Roster* roster = node.agent->roster();
  const auto self = node.agent->core().self_index();
  if (!envelope.ok() || roster == nullptr || !self) return;
  auto report = decode_report_payload(envelope->payload, *roster, *self, envelope->timestamp_ms);
  if (!report.ok()) return;
  const bool healthy = report->self_check.listener_ok && report->self_check.service_ok &&
                       std::all_of(report->view.results.begin(), report->view.results.end(),
                                   [](const ProbeResult& r) { return r.fail_streak == 0; });
  if (!healthy) return;
  ++result_.healthy_reports;
  result_.healthy_report_bytes_max = std::max<std::uint64_t>(result_.healthy_report_bytes_max, raw.size());
  result_.healthy_report_bytes_mean += static_cast<double>(raw.size());
}

// The machine answers a self-check from its model.
void Run::answer_self_check(SimNode& node) {
  agent::SelfCheckOutcome outcome;
  outcome.self_check.listener_ok = node.listener_up;
  outcome.self_check.service_ok = node.service_up;
  if (!node.listener_up) outcome.self_check.reason = "listener on 443 not accepting";
  else if (!node.service_up) outcome.self_check.reason = "vpn service not running";
  outcome.metrics = plausible_metrics(*node.metrics_rng, now_ms_ - start_ms_);
  apply_effects(node, node.agent->on_self_check(outcome, node.clock(now_ms_)));
}

// A probe through the network model: its outcome is decided now (the SYNs
// and their answers), and comes back after the round trip, or after the
// prober's deadline when nothing answered.
void Run::run_probe(SimNode& node, const agent::ProbeRequest& request) {
  const std::uint32_t target = world_.index_of.at(request.target);
  agent::ProbeOutcome outcome;
  outcome.probe_id = request.probe_id;
  outcome.target = request.target;
  outcome.tls = request.tls;
  outcome.failure = probe(node.index, target, request.tls);
  outcome.wire_bytes = request.tls ? scenario_.sim.tls_probe_bytes : scenario_.sim.tcp_probe_bytes;
  node.probe_bytes += outcome.wire_bytes;
  DurationMs delay = scenario_.sim.probe_timeout_ms;
  if (outcome.failure != ProbeFailure::tcp_timeout) {
    delay = network_.delay(node.index, target, rng_) + network_.delay(target, node.index, rng_);
    outcome.connect_ms = delay;
  }
  std::uint32_t slot;
  if (free_outcomes_.empty()) {
    slot = static_cast<std::uint32_t>(outcomes_.size());
    outcomes_.emplace_back();
  } else {
    slot = free_outcomes_.back();
    free_outcomes_.pop_back();
  }
  outcomes_[slot] = std::move(outcome);
  schedule(now_ms_ + delay, Action::probe_result, node.index, node.generation, slot);
}

void Run::on_probe_result(SimNode& node, std::uint32_t slot) {
  agent::ProbeOutcome outcome = std::move(outcomes_[slot]);
  free_outcomes_.push_back(slot);
  apply_effects(node, node.agent->on_probe_outcome(outcome, node.clock(now_ms_)));
}

ProbeFailure Run::probe(std::uint32_t observer, std::uint32_t target, bool tls) {
  const SimNode& node = nodes_[target];
  if (!node.active || !node.machine_up) return ProbeFailure::tcp_timeout;
  if (network_.probe_blocked(observer, target)) return ProbeFailure::tcp_timeout;
  // A connect attempt succeeds when the SYN and its answer both get through.
  for (std::uint32_t attempt = 0; attempt < scenario_.sim.syn_attempts; ++attempt) {
    if (network_.packet_passes(observer, target, rng_) &&
        network_.packet_passes(target, observer, rng_)) {
      if (!node.listener_up) return ProbeFailure::tcp_refused;
      if (tls && network_.sni_blocked(observer, target)) return ProbeFailure::tls_reset;
      return ProbeFailure::none;
    }
  }
  return ProbeFailure::tcp_timeout;
}

const std::vector<std::uint32_t>& Run::world_indices(const Roster& roster) {
  auto it = world_index_cache_.find(roster.version);
  if (it != world_index_cache_.end()) return it->second;
  std::vector<std::uint32_t> indices;
  for (const ServerEntry& server : roster.servers) indices.push_back(world_.index_of.at(server.id));
  return world_index_cache_.emplace(roster.version, std::move(indices)).first->second;
}


// ---- records and frames ----

// A record made in this run (a report, a roster) is tracked from now until
// every node running with a roster holds it (docs/SIMULATOR.md, "Dissemination").
void Run::track_record(SimNode& node, const Bytes& raw) {
  if (!measuring_) return;
  const std::uint64_t key = tail_key(raw);
  std::uint64_t& open = open_record_of_origin_[node.index];
  if (open != 0 && tracked_.erase(open) != 0) ++result_.dissemination.incomplete;
  open = key;
  tracked_[key] = Tracked{now_ms_, running_with_roster(), 0, node.index};
  ++result_.dissemination.records;
  record_bytes_published_ += raw.size();
}

void Run::publish_record(SimNode& node, const Bytes& raw, bool track) {
  if (track) track_record(node, raw);
  auto effects = node.agent->offer_record(raw, node.clock(now_ms_));
  if (!effects.ok()) {
    ++network_drops_[std::string("publish_refused_") + to_string(effects.code())];
    return;
  }
  apply_effects(node, std::move(effects.value()));
}

std::uint32_t Run::running_with_roster() const {
  std::uint32_t count = 0;
  for (const SimNode& node : nodes_) count += node.running() && node.agent->roster() != nullptr;
  return count;
}

void Run::track_persisted(const Bytes& raw) {
  auto it = tracked_.find(tail_key(raw));
  if (it == tracked_.end()) return;
  Tracked& tracked = it->second;
  if (++tracked.reached < tracked.needed) return;
  const DurationMs elapsed = now_ms_ - tracked.published_ms;
  const DurationMs tick = scenario_.sim.tick_interval_ms;
  dissemination_rounds_.push_back(static_cast<std::uint32_t>((elapsed + tick - 1) / tick));
  result_.dissemination.ms_max = std::max(result_.dissemination.ms_max, elapsed);
  ++result_.dissemination.completed;
  open_record_of_origin_[tracked.origin] = 0;
  tracked_.erase(it);
}

void Run::send_frame(SimNode& from, std::uint32_t to, Bytes frame) {
  from.gossip_bytes_sent += frame.size();
  if (tamper_pending_ > 0 && !frame.empty()) {
    frame.back() ^= 0x01;  // inside the AEAD tag
    --tamper_pending_;
    ++network_drops_["frames_tampered_in_flight"];
  }
  // The daemon's choice (gossip/pair_connection.h). A connection works
  // while its opener may still connect (a block since it opened cuts it).
  const bool streams = scenario_.sim.gossip_loss == GossipLoss::stream;
  const bool adopted = streams && streams_.adopted_open(from.index, to, now_ms_) &&
                       !network_.gossip_blocked(to, from.index);
  const bool own_open = streams && streams_.own_open(from.index, to, now_ms_);
  const gossip::PairConnection carrier = gossip::pair_connection(own_open, adopted, from.id < nodes_[to].id);
  const bool on_adopted = carrier == gossip::PairConnection::theirs;
  if (!on_adopted && network_.gossip_blocked(from.index, to)) {
    report_link_failure(from.index, to, now_ms_ + streams_.failure_delay(from.index, to, now_ms_));
    streams_.close(from.index, to);
    ++network_drops_["frames_blocked"];
    return;
  }
  // A new connection to a machine that is off gets no answer (the connect
  // times out: a failed path); to a stopped agent it is refused (not a
  // path failure). Either way no connection is made, so no path is up.
  if (streams && carrier == gossip::PairConnection::open_ours && !nodes_[to].running()) {
    if (!nodes_[to].machine_up) {
      report_link_failure(from.index, to, now_ms_ + streams_.failure_delay(from.index, to, now_ms_));
    }
    ++network_drops_["frames_to_stopped_agent"];
    return;
  }
  UnixMs at = now_ms_;
  if (!streams) {
    if (!network_.packet_passes(from.index, to, rng_)) {
      ++network_drops_["frames_lost"];
      return;
    }
    at += network_.delay(from.index, to, rng_);
  } else {
    auto arrival = on_adopted ? streams_.arrival_adopted(from.index, to, frame.size(), now_ms_, rng_)
                              : streams_.arrival(from.index, to, frame.size(), now_ms_, rng_);
    if (!arrival) {
      report_link_failure(from.index, to, streams_.failed_at());
      ++network_drops_["frames_connection_failed"];
      return;
    }
    at = *arrival;
    if (!on_adopted && streams_.opened_last()) {
      schedule(streams_.ready_last(), Action::link_up, from.index, from.generation, to);
    }
  }
  std::uint32_t slot;
  if (free_slots_.empty()) {
    slot = static_cast<std::uint32_t>(frames_.size());
    frames_.emplace_back();
  } else {
    slot = free_slots_.back();
    free_slots_.pop_back();
  }
  frames_[slot] = std::move(frame);
  schedule(at, Action::deliver, to, from.index, slot | (streams && !on_adopted ? kOwnConnectionBit : 0));
}

void Run::inject_frame(std::uint32_t to, Bytes frame) {
  std::uint32_t slot = static_cast<std::uint32_t>(frames_.size());
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    frames_.emplace_back();
  }
  frames_[slot] = std::move(frame);
  schedule(now_ms_ + scenario_.link_defaults.latency_ms, Action::deliver, to, kNoSender, slot);
}

void Run::on_deliver(SimNode& node, std::uint32_t arg, std::uint32_t sender) {
  const std::uint32_t slot = arg & ~kOwnConnectionBit;
  Bytes frame = std::move(frames_[slot]);
  frames_[slot] = Bytes{};
  free_slots_.push_back(slot);
  if (!node.running()) {
    if (sender != kNoSender) {
      // A machine that is off answers nothing: the sender's TCP times out.
      // A stopped agent on a live machine refuses or resets at once, which
      // the daemon does not count as a failed path.
      if (!node.machine_up) {
        report_link_failure(sender, node.index, now_ms_ + streams_.failure_delay(sender, node.index, now_ms_));
      }
      streams_.close(sender, node.index);
    }
    ++network_drops_["frames_to_stopped_agent"];
    return;
  }
  node.gossip_bytes_received += frame.size();
  agent::AgentEffects effects = node.agent->on_frame(frame, node.clock(now_ms_));
  // The daemon adopts a connection that carried its opener's sealed frame
  // (node/daemon_effects.cc): from now on it writes on it too.
  if ((arg & kOwnConnectionBit) != 0 && !effects.frame_sender.empty() && streams_.adopt(sender, node.index)) {
    node.agent->on_link_up(nodes_[sender].id, node.clock(now_ms_));
  }
  apply_effects(node, std::move(effects));
}

void Run::report_link_failure(std::uint32_t from, std::uint32_t to, UnixMs at) {
  if (!failure_pending_.insert(std::uint64_t{from} << 32 | to).second) return;
  schedule(at, Action::link_failed, from, nodes_[from].generation, to);
}

void Run::on_link_failed(SimNode& node, std::uint32_t peer) {
  node.agent->on_link_failed(nodes_[peer].id, node.clock(now_ms_));
}

void Run::on_link_up(SimNode& node, std::uint32_t peer) {
  node.agent->on_link_up(nodes_[peer].id, node.clock(now_ms_));
}

ScenarioResult<RunResult> run_scenario(const Scenario& scenario, const RunOptions& options) {
  auto world = build_world(scenario);
  if (!world.ok()) return world.error();
  const auto started = std::chrono::steady_clock::now();  // times the run only
  Run run(scenario, std::move(world.value()), options);
  RunResult result = run.execute();
  result.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

}  // namespace mesh::sim
