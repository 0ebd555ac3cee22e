// The run loop and everything a node does on its own timers: core ticks,
// reports, probes, and frames through the network model.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

#include "gossip/link.h"
#include "tools/meshsim/simulator_impl.h"

namespace mesh::sim {
namespace {

std::uint64_t mix(std::uint64_t a, std::uint64_t b) {
  std::uint64_t z = a ^ (b + 0x9e3779b97f4a7c15ull + (a << 6) + (a >> 2));
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// The record's last 8 bytes (the end of its signature): tells records apart
// in the dissemination measurement without decoding them.
std::uint64_t tail_key(const Bytes& raw) {
  std::uint64_t key = 0;
  if (raw.size() >= 8) std::memcpy(&key, raw.data() + raw.size() - 8, 8);
  return key == 0 ? 1 : key;
}

Metrics plausible_metrics(gossip::Rng& rng, UnixMs uptime_ms) {
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
      rng_(mix(scenario.seed, 0x6e6574)),
      network_(world_, scenario) {
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
    node.metrics_rng.emplace(mix(scenario.seed, 0x6d6574000000ull + i));
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
  false_grace_ms_ = params_.stale_after_ms + params_.report_interval_ms + max_skew;
  result_.false_verdict_grace_ms = false_grace_ms_;
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
      case Action::report: if (current) on_report(node); break;
      case Action::probe: if (current) on_probe(node); break;
      case Action::deliver: on_deliver(node, item.arg); break;
      case Action::check:
        on_check(item.arg & 1, item.gen == 0 ? std::nullopt : std::optional<std::size_t>(item.gen - 1));
        break;
      case Action::digest_check: on_digest_check(item.arg); break;
      case Action::measure_start: start_measuring(); break;
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
  if (node.core) add_counters(node.retired, node.core->counters());
  gossip::CoreConfig config;
  config.self = node.id;
  config.node_key = node.key.secret_key;
  config.operator_key = world_.operator_key.public_key;
  config.boot_counter = node.boot_counter;
  config.tick_interval_ms = scenario_.sim.tick_interval_ms;
  config.overlay_rings = scenario_.sim.overlay_rings;
  config.sync_interval_ms = scenario_.sim.sync_interval_ms;
  // Only checked nodes' verdicts are read: the others check every payload
  // at acceptance but need not hold N decoded reports (docs/SIMULATOR.md, Performance).
  config.hold_decoded_reports = node.checked;
  node.core = std::make_unique<gossip::GossipCore>(
      config, mix(scenario_.seed, (std::uint64_t{node.index} << 20) + node.boot_counter),
      gossip::SharedWork{&verifier_, &roster_memo_, &record_memo_});
  node.prober.clear();
  node.evaluator.reset();
  node.fed_seq.clear();
  const UnixMs now = node.clock(now_ms_);
  if (node.persistence && !node.stored.empty()) {
    std::vector<Bytes> records;
    for (const auto& [key, raw] : node.stored) records.push_back(raw);
    apply_effects(node, node.core->load(records, now));
  }
  // The operator installs the current roster with the daemon (meshctl); a
  // restarted daemon has it from storage.
  if (fresh_install || node.core->roster() == nullptr) {
    publish_record(node, roster_records_.rbegin()->second, false);
  }
  node.report_seq = std::max(node.report_seq,
                             node.core->held_seq(RecordKind::report, node.id).value_or(0));
  const Parameters& p = params_;
  const DurationMs tick = scenario_.sim.tick_interval_ms;
  schedule(now_ms_ + static_cast<DurationMs>(rng_.below(tick)) + 1, Action::tick, node.index, node.generation);
  schedule(now_ms_ + static_cast<DurationMs>(rng_.below(p.report_interval_ms)) + 1, Action::report,
           node.index, node.generation);
  schedule(now_ms_ + static_cast<DurationMs>(rng_.below(p.probe_interval_ms)) + 1, Action::probe,
           node.index, node.generation);
}

void Run::stop_agent(SimNode& node) {
  node.agent_running = false;
  ++node.generation;
}

// ---- timers ----

void Run::on_tick(SimNode& node) {
  schedule(now_ms_ + scenario_.sim.tick_interval_ms, Action::tick, node.index, node.generation);
  apply_effects(node, node.core->on_tick(node.clock(now_ms_)));
}

void Run::on_report(SimNode& node) {
  schedule(now_ms_ + params_.report_interval_ms, Action::report, node.index, node.generation);
  if (quiet(now_ms_)) return;
  const Roster* roster = node.core->roster();
  const auto self = node.core->self_index();
  if (roster == nullptr || !self) return;
  const UnixMs now = node.clock(now_ms_);
  Report report = build_report(node, *roster, *self, now);
  bool healthy = report.self_check.listener_ok && report.self_check.service_ok &&
                 std::all_of(report.view.results.begin(), report.view.results.end(),
                             [](const ProbeResult& r) { return r.fail_streak == 0; });
  Bytes payload = encode_report_payload(report, now);
  node.report_seq = std::max(node.report_seq,
                             node.core->held_seq(RecordKind::report, node.id).value_or(0)) + 1;
  Bytes raw = encode_signed_record(RecordKind::report, node.id, node.report_seq, now, payload,
                                   node.key.secret_key);
  if (healthy) {
    ++result_.healthy_reports;
    result_.healthy_report_bytes_max = std::max<std::uint64_t>(result_.healthy_report_bytes_max, raw.size());
    result_.healthy_report_bytes_mean += static_cast<double>(raw.size());
  }
  publish_record(node, std::move(raw), true);
}

Report Run::build_report(SimNode& node, const Roster& roster, std::uint32_t self, UnixMs now) {
  Report report;
  report.self_check.listener_ok = node.listener_up;
  report.self_check.service_ok = node.service_up;
  if (!node.listener_up) report.self_check.reason = "listener on 443 not accepting";
  else if (!node.service_up) report.self_check.reason = "vpn service not running";
  report.metrics = plausible_metrics(*node.metrics_rng, now_ms_ - start_ms_);
  report.view = node.prober.view_for(roster, targets_of(node, now), self);
  return report;
}

void Run::on_probe(SimNode& node) {
  schedule(now_ms_ + params_.probe_interval_ms, Action::probe, node.index, node.generation);
  const Roster* roster = node.core->roster();
  if (roster == nullptr || !node.core->self_index()) return;
  if (node.prober_roster_version != roster->version) {
    node.prober.retain_only(*roster);
    node.prober_roster_version = roster->version;
  }
  const UnixMs now = node.clock(now_ms_);
  const auto& world = world_indices(*roster);
  const std::uint32_t tls_every = scenario_.sim.tls_every;
  for (std::uint32_t target : targets_of(node, now)) {
    const std::uint32_t t = world[target];
    const verdict::TargetStreak* streak =
        node.prober.record(roster->servers[target].id, now, probe(node.index, t),
                           roster->params.stale_after_ms);
    // Every tls_every-th probe of a target is a TLS handshake (the cost
    // model is the simulator's; the counter is the ledger's).
    const bool tls = streak != nullptr && tls_every > 0 && streak->probes % tls_every == 0;
    node.probe_bytes += tls ? scenario_.sim.tls_probe_bytes : scenario_.sim.tcp_probe_bytes;
  }
}

ProbeFailure Run::probe(std::uint32_t observer, std::uint32_t target) {
  const SimNode& node = nodes_[target];
  if (!node.active || !node.machine_up) return ProbeFailure::tcp_timeout;
  // A connect attempt succeeds when the SYN and its answer both get through.
  for (std::uint32_t attempt = 0; attempt < scenario_.sim.syn_attempts; ++attempt) {
    if (network_.packet_passes(observer, target, rng_) &&
        network_.packet_passes(target, observer, rng_)) {
      return node.listener_up ? ProbeFailure::none : ProbeFailure::tcp_refused;
    }
  }
  return ProbeFailure::tcp_timeout;
}

std::vector<std::uint32_t> Run::targets_of(const SimNode& node, UnixMs now) {
  const Roster& roster = *node.core->roster();
  const std::uint64_t epoch = verdict::epoch_of(now, roster.params);
  const verdict::WitnessPlan& current = plan(roster, epoch);
  const verdict::WitnessPlan& next = plan(roster, epoch + 1);
  return verdict::probe_targets(current, next, *node.core->self_index(), now, roster.params);
}

const verdict::WitnessPlan& Run::plan(const Roster& roster, std::uint64_t epoch) {
  auto key = std::make_pair(roster.version, epoch);
  auto it = plan_cache_.find(key);
  if (it != plan_cache_.end()) return it->second;
  // Plans of epochs two behind are never asked for again (std::map keeps
  // the references to the others valid).
  std::erase_if(plan_cache_, [&](const auto& entry) {
    return entry.first.first == roster.version && entry.first.second + 2 < epoch;
  });
  return plan_cache_.emplace(key, verdict::plan_witnesses(roster, epoch)).first->second;
}

const std::vector<std::uint32_t>& Run::world_indices(const Roster& roster) {
  auto it = world_index_cache_.find(roster.version);
  if (it != world_index_cache_.end()) return it->second;
  std::vector<std::uint32_t> indices;
  for (const ServerEntry& server : roster.servers) indices.push_back(world_.index_of.at(server.id));
  return world_index_cache_.emplace(roster.version, std::move(indices)).first->second;
}

bool Run::quiet(UnixMs at) const {
  return std::any_of(quiet_windows_.begin(), quiet_windows_.end(),
                     [&](const auto& window) { return at >= window.first && at <= window.second; });
}

// ---- records and frames ----

void Run::publish_record(SimNode& node, Bytes raw, bool track) {
  if (track && measuring_) {
    const std::uint64_t key = tail_key(raw);
    std::uint64_t& open = open_record_of_origin_[node.index];
    if (open != 0 && tracked_.erase(open) != 0) ++result_.dissemination.incomplete;
    open = key;
    tracked_[key] = Tracked{now_ms_, running_with_roster(), 0, node.index};
    ++result_.dissemination.records;
    record_bytes_published_ += raw.size();
  }
  auto effects = node.core->publish(std::move(raw), node.clock(now_ms_));
  if (!effects.ok()) {
    ++network_drops_[std::string("publish_refused_") + to_string(effects.code())];
    return;
  }
  apply_effects(node, std::move(effects.value()));
}

std::uint32_t Run::running_with_roster() const {
  std::uint32_t count = 0;
  for (const SimNode& node : nodes_) count += node.running() && node.core->roster() != nullptr;
  return count;
}

void Run::apply_effects(SimNode& node, gossip::Effects&& effects) {
  if (!effects.send.empty()) {
    const auto& world = world_indices(*node.core->roster());
    for (gossip::Outgoing& out : effects.send) send_frame(node, world[out.to], std::move(out.frame));
  }
  for (const auto& raw : effects.persist) {
    track_persisted(*raw);
    if (!node.persistence) continue;
    auto envelope = decode_envelope_view(*raw);
    MESH_CHECK(envelope.ok(), "the core persisted a record that does not decode");
    node.stored[{envelope->kind, std::string(envelope->origin)}] = *raw;
  }
  for (const auto& key : effects.erase) node.stored.erase(key);
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
  if (tamper_pending_ > 0 && frame.size() > gossip::kFrameHeaderBytes + 1) {
    frame[gossip::kFrameHeaderBytes + 1] ^= 0x01;  // inside the ciphertext
    --tamper_pending_;
    ++network_drops_["frames_tampered_in_flight"];
  }
  if (network_.blocked(from.index, to)) {
    ++network_drops_["frames_blocked"];
    return;
  }
  if (!network_.packet_passes(from.index, to, rng_)) {
    ++network_drops_["frames_lost"];
    return;
  }
  const DurationMs delay = network_.delay(from.index, to, rng_);
  std::uint32_t slot;
  if (free_slots_.empty()) {
    slot = static_cast<std::uint32_t>(frames_.size());
    frames_.emplace_back();
  } else {
    slot = free_slots_.back();
    free_slots_.pop_back();
  }
  frames_[slot] = std::move(frame);
  schedule(now_ms_ + delay, Action::deliver, to, 0, slot);
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
  schedule(now_ms_ + scenario_.link_defaults.latency_ms, Action::deliver, to, 0, slot);
}

void Run::on_deliver(SimNode& node, std::uint32_t slot) {
  Bytes frame = std::move(frames_[slot]);
  frames_[slot] = Bytes{};
  free_slots_.push_back(slot);
  if (!node.running()) {
    ++network_drops_["frames_to_stopped_agent"];
    return;
  }
  node.gossip_bytes_received += frame.size();
  apply_effects(node, node.core->on_message(frame, node.clock(now_ms_)));
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
