// Verdict checks: every check_interval (and at every snapshot and
// expectation time) the checked nodes evaluate their held reports with
// their own verdict::Evaluator; the results feed the false-verdict count,
// the expectations and the snapshots.
#include <algorithm>
#include <cmath>
#include <set>

#include "common/bytes.h"
#include "tools/meshsim/duration.h"
#include "tools/meshsim/simulator_impl.h"

namespace mesh::sim {
namespace {

const verdict::ServerVerdict* find_verdict(const verdict::Evaluation& evaluation,
                                           const ServerId& id) {
  for (const auto& verdict : evaluation.servers) {
    if (verdict.id == id) return &verdict;
  }
  return nullptr;
}

const verdict::RouteMembership* find_route(const verdict::Evaluation& evaluation,
                                           const std::string& id) {
  for (const auto& route : evaluation.routes) {
    if (route.route_id == id) return &route;
  }
  return nullptr;
}

bool in_route(const verdict::Evaluation& evaluation, const std::string& route_id, const ServerId& server) {
  const auto* route = find_route(evaluation, route_id);
  return route != nullptr && std::find(route->members.begin(), route->members.end(), server) != route->members.end();
}

// Whether one node's evaluation satisfies a point-in-time expectation.
bool holds(const Expectation& expect, const verdict::Evaluation& evaluation) {
  switch (expect.kind) {
    case ExpectKind::status:
    case ExpectKind::status_during: {
      const auto* verdict = find_verdict(evaluation, expect.server);
      return verdict != nullptr && verdict->status == expect.status;
    }
    case ExpectKind::unreliable:
      return std::find(evaluation.unreliable_observers.begin(), evaluation.unreliable_observers.end(),
                       expect.server) != evaluation.unreliable_observers.end();
    case ExpectKind::in_rotation:
    case ExpectKind::out_of_rotation:
      return in_route(evaluation, expect.route, expect.server) == (expect.kind == ExpectKind::in_rotation);
    default: return true;
  }
}

std::string shown(const Expectation& expect, const verdict::Evaluation& evaluation) {
  const auto* verdict = find_verdict(evaluation, expect.server);
  if (verdict == nullptr) return "absent";
  return std::string(verdict::to_string(verdict->status)) + " (" + std::to_string(verdict->failing) +
         " of " + std::to_string(verdict->eligible) + ")";
}

}  // namespace

void Run::schedule_checks() {
  // time -> (periodic, snapshot index + 1)
  std::map<DurationMs, std::pair<bool, std::uint32_t>> times;
  for (DurationMs t = scenario_.sim.check_interval_ms; t <= scenario_.duration_ms;
       t += scenario_.sim.check_interval_ms) {
    times[t].first = true;
  }
  for (std::size_t i = 0; i < scenario_.snapshots.size(); ++i) {
    times[scenario_.snapshots[i]].second = static_cast<std::uint32_t>(i + 1);
  }
  const auto count = scenario_.expectations.size();
  first_shown_ms_.assign(count, std::nullopt);
  expectation_state_.assign(count, -1);
  expectation_detail_.assign(count, "");
  since_ms_.assign(count, 0);
  for (std::size_t k = 0; k < count; ++k) {
    const Expectation& expect = scenario_.expectations[k];
    // Time to verdict counts from `since`, by default the last event at or before `at`.
    since_ms_[k] = expect.since_ms;
    if (since_ms_[k] < 0) {
      since_ms_[k] = 0;
      for (const Event& event : scenario_.events) {
        if (event.at_ms <= expect.at_ms) since_ms_[k] = std::max(since_ms_[k], event.at_ms);
      }
    }
    switch (expect.kind) {
      case ExpectKind::status_during:
        times.try_emplace(expect.from_ms);
        times.try_emplace(expect.to_ms);
        break;
      case ExpectKind::digests_agree:
        for (DurationMs t = expect.at_ms; t <= expect.to_ms; t += scenario_.sim.tick_interval_ms) {
          schedule(start_ms_ + t, Action::digest_check, 0, 0, static_cast<std::uint32_t>(k));
        }
        break;
      case ExpectKind::status:
      case ExpectKind::unreliable:
      case ExpectKind::in_rotation:
      case ExpectKind::out_of_rotation: times.try_emplace(expect.at_ms); break;
      default: break;
    }
  }
  for (const auto& [t, what] : times) {
    schedule(start_ms_ + t, Action::check, 0, what.second, what.first ? 1 : 0);
  }
}

const verdict::Evaluation* Run::evaluate(SimNode& node) {
  ++result_.evaluations;
  return &check_evaluations_.emplace_back(node.agent->evaluate(node.clock(now_ms_)));
}

void Run::on_check(bool periodic, std::optional<std::size_t> snapshot) {
  refresh_truth();
  check_evaluations_.clear();
  // Same record set, same clock, same roster: the same Evaluation (the
  // engine is a pure function of them), so it is computed once.
  std::map<std::tuple<gossip::Digest, UnixMs, std::uint64_t>, const verdict::Evaluation*> memo;
  std::vector<const verdict::Evaluation*> evaluations(nodes_.size(), nullptr);
  for (SimNode& node : nodes_) {
    if (!node.checked || !node.running() || node.core().roster() == nullptr) continue;
    auto key = std::make_tuple(node.core().digest(), node.clock(now_ms_), node.core().roster()->version);
    auto it = memo.find(key);
    if (it != memo.end()) {
      ++result_.evaluations_memoized;
      evaluations[node.index] = it->second;
    } else {
      evaluations[node.index] = memo[key] = evaluate(node);
    }
    judge_false_verdicts(node, *evaluations[node.index]);
    judge_missed_verdicts(node, *evaluations[node.index]);
    if (evaluations[node.index]->partitioned != node.partitioned_shown) {
      node.partitioned_shown = evaluations[node.index]->partitioned;
      result_.partitioned_flips_max = std::max(result_.partitioned_flips_max, ++node.partitioned_flips);
    }
  }
  if (periodic) ++result_.checks;
  judge_expectations(evaluations);
  if (snapshot) take_snapshot(*snapshot, evaluations);
}

// A false verdict: `unreachable` or `unavailable` shown for a server that
// was fine (machine, listener and service up, and in the network model
// reachable from at least one server of every country) throughout the last
// false_grace_ms_ (docs/SIMULATOR.md, "False verdicts").
void Run::judge_false_verdicts(const SimNode& node, const verdict::Evaluation& evaluation) {
  const auto& world = world_indices(*node.core().roster());
  for (std::size_t i = 0; i < evaluation.servers.size() && i < world.size(); ++i) {
    const auto status = evaluation.servers[i].status;
    if (status != verdict::ServerStatus::unreachable && status != verdict::ServerStatus::unavailable) {
      continue;
    }
    const SimNode& server = nodes_[world[i]];
    if (!server.healthy() || network_.unreachable_from_a_country(server.index)) continue;
    if (now_ms_ - server.last_unfine_ms <= false_grace_ms_) continue;
    ++result_.false_verdicts;
    if (result_.false_examples.size() < kVerdictExamplesMax) {
      result_.false_examples.push_back({now_ms_ - start_ms_, node.id, server.id, status});
    }
  }
}

// A missed verdict: a server in rotation (ok or no_data) that blocks have
// left a whole country (of at least two other servers) unable to connect
// to, or whose machine is off, for longer than the detection bound
// (docs/SIMULATOR.md, "Missed verdicts").
void Run::judge_missed_verdicts(const SimNode& node, const verdict::Evaluation& evaluation) {
  const auto& world = world_indices(*node.core().roster());
  for (std::size_t i = 0; i < evaluation.servers.size() && i < world.size(); ++i) {
    const verdict::ServerVerdict& verdict = evaluation.servers[i];
    const bool in_rotation =
        (verdict.status == verdict::ServerStatus::ok || verdict.status == verdict::ServerStatus::no_data) &&
        !verdict.flags.held_out;
    if (!in_rotation) continue;
    const SimNode& server = nodes_[world[i]];
    if (server.cut_off_since_ms == kNeverMs || now_ms_ - server.cut_off_since_ms <= missed_after_ms_) continue;
    ++result_.missed_verdicts;
    result_.missed_held_back += verdict.flags.insufficient_evidence;
    if (result_.missed_examples.size() < kVerdictExamplesMax) {
      result_.missed_examples.push_back({now_ms_ - start_ms_, node.id, server.id, verdict.status,
                                         verdict.flags.insufficient_evidence});
    }
  }
}

void Run::judge_expectations(const std::vector<const verdict::Evaluation*>& evaluations) {
  const DurationMs t = now_ms_ - start_ms_;
  for (std::size_t k = 0; k < scenario_.expectations.size(); ++k) {
    const Expectation& expect = scenario_.expectations[k];
    if (expect.kind == ExpectKind::rotation_changes_max) {
      count_rotation_changes(k, evaluations);
      continue;
    }
    const bool point = expect.kind == ExpectKind::status || expect.kind == ExpectKind::unreliable ||
                       expect.kind == ExpectKind::in_rotation || expect.kind == ExpectKind::out_of_rotation;
    const bool during = expect.kind == ExpectKind::status_during && t >= expect.from_ms && t <= expect.to_ms;
    const bool measuring = expect.kind == ExpectKind::status && !first_shown_ms_[k] &&
                           t > since_ms_[k] && t <= expect.at_ms;
    if (!(point && t == expect.at_ms) && !during && !measuring) continue;
    std::uint32_t evaluated = 0;
    std::uint32_t failing = 0;
    std::string example;
    for (std::size_t i = 0; i < evaluations.size(); ++i) {
      if (evaluations[i] == nullptr) continue;
      if (expect.exclude_server && nodes_[i].id == expect.server) continue;
      if (!expect.node.empty() && nodes_[i].id != expect.node) continue;
      ++evaluated;
      if (holds(expect, *evaluations[i])) continue;
      if (++failing == 1) example = nodes_[i].id + " shows " + shown(expect, *evaluations[i]);
    }
    const bool all = evaluated > 0 && failing == 0;
    if (measuring && all) first_shown_ms_[k] = t - since_ms_[k];
    if (!(point && t == expect.at_ms) && !during) continue;
    if (all) {
      if (expectation_state_[k] != 0) expectation_state_[k] = 1;
      continue;
    }
    if (expectation_state_[k] == 0) continue;  // keep the first failure's detail
    expectation_state_[k] = 0;
    expectation_detail_[k] =
        evaluated == 0 ? "at " + format_duration(t) + ": no node evaluated"
                       : "at " + format_duration(t) + ": " + std::to_string(failing) + " of " +
                             std::to_string(evaluated) + " nodes disagree, e.g. " + example;
  }
}

// Counts, per checked node, each check at which `server`'s membership of
// `route` differs from the previous one that node showed.
void Run::count_rotation_changes(std::size_t k, const std::vector<const verdict::Evaluation*>& evaluations) {
  const Expectation& expect = scenario_.expectations[k];
  std::vector<int>& shown = rotation_shown_[k];
  std::vector<std::uint64_t>& changes = rotation_changes_[k];
  shown.resize(nodes_.size(), -1);
  changes.resize(nodes_.size(), 0);
  for (std::size_t i = 0; i < evaluations.size(); ++i) {
    if (evaluations[i] == nullptr) continue;
    const int member = in_route(*evaluations[i], expect.route, expect.server) ? 1 : 0;
    if (shown[i] >= 0 && shown[i] != member) ++changes[i];
    shown[i] = member;
  }
}

// Converged: every running node holds every record signed at least the
// expectation's lag_ms (kConvergedLagMs by default) ago by a server of its
// roster (or a newer one of that origin), and every roster published that
// long ago (or a newer one).
// Reports keep flowing: nothing pauses for the check (docs/SIMULATOR.md).
void Run::on_digest_check(std::size_t k) {
  if (expectation_state_[k] == 1) return;
  const UnixMs cutoff = now_ms_ - scenario_.expectations[k].lag_ms;
  std::uint64_t roster_due = 0;
  for (const auto& [at, version] : rosters_published_) {
    if (at <= cutoff) roster_due = std::max(roster_due, version);
  }
  std::uint32_t running = 0, lagging = 0;
  std::string example;
  for (const SimNode& node : nodes_) {
    const Roster* roster = node.running() ? node.core().roster() : nullptr;
    if (roster == nullptr) continue;
    ++running;
    std::string missing;
    if (roster->version < roster_due) missing = "roster " + std::to_string(roster_due);
    const auto& world = world_indices(*roster);
    for (std::uint32_t r = 0; r < world.size() && missing.empty(); ++r) {
      if (world[r] >= signed_.size()) continue;
      // The latest record signed by the cut-off (records are in signing order).
      const Signed* due = nullptr;
      const auto& history = signed_[world[r]];
      for (auto it = history.rbegin(); it != history.rend(); ++it) {
        if (it->published_ms <= cutoff) {
          due = &*it;
          break;
        }
      }
      if (due == nullptr) continue;
      auto held = node.core().report_of(r);
      const bool has = held && (held->envelope->timestamp_ms > due->timestamp_ms ||
                                (held->envelope->timestamp_ms == due->timestamp_ms &&
                                 held->envelope->seq >= due->seq));
      if (!has) missing = nodes_[world[r]].id + "'s report of " + format_duration(due->published_ms - start_ms_);
    }
    if (missing.empty()) continue;
    if (++lagging == 1) example = node.id + " lacks " + missing;
  }
  const Expectation& expect = scenario_.expectations[k];
  const DurationMs t = now_ms_ - start_ms_;
  if (running > 0 && lagging == 0) {
    expectation_state_[k] = 1;
    first_shown_ms_[k] = t - expect.at_ms;
    return;
  }
  expectation_detail_[k] = "at " + format_duration(t) + ": " + std::to_string(lagging) + " of " +
                           std::to_string(running) + " running nodes lag, e.g. " + example;
}

void Run::take_snapshot(std::size_t index, const std::vector<const verdict::Evaluation*>& evaluations) {
  Snapshot snapshot;
  snapshot.at_ms = now_ms_ - start_ms_;
  std::set<gossip::Digest> digests;
  std::set<std::string> verdicts;
  std::map<const verdict::Evaluation*, std::string> verdict_digest;
  for (SimNode& node : nodes_) {
    if (!node.running()) continue;
    ++snapshot.running_nodes;
    digests.insert(node.core().digest());
    const verdict::Evaluation* evaluation = evaluations[node.index];
    std::string fingerprint;
    if (evaluation != nullptr) {
      auto [it, fresh] = verdict_digest.try_emplace(evaluation);
      if (fresh) it->second = verdict::evaluation_digest(*evaluation);
      fingerprint = it->second;
      verdicts.insert(fingerprint);
      ++snapshot.evaluated_nodes;
    }
    if (snapshot.nodes.size() >= options_.snapshot_nodes) continue;
    NodeSnapshot listing{node.id, to_hex(node.core().digest()), fingerprint, {}, {}, {}};
    if (evaluation != nullptr) {
      for (const auto& v : evaluation->servers) {
        listing.servers.push_back({v.id, v.status, v.flags, v.failing, v.eligible, v.by_country});
      }
      for (const auto& r : evaluation->routes) listing.routes.push_back({r.route_id, r.members, r.degraded});
      listing.unreliable_observers = evaluation->unreliable_observers;
      listing.partitioned = evaluation->partitioned;
    }
    snapshot.nodes.push_back(std::move(listing));
  }
  snapshot.digest_groups = static_cast<std::uint32_t>(digests.size());
  snapshot.verdict_groups = static_cast<std::uint32_t>(verdicts.size());
  (void)index;
  result_.snapshots.push_back(std::move(snapshot));
}

void Run::finish_expectations() {
  auto counter = [&](const std::string& name) -> std::uint64_t {
    auto it = result_.counters.find(name);
    if (it != result_.counters.end()) return it->second;
    auto net = result_.network.find(name);
    return net != result_.network.end() ? net->second : 0;
  };
  for (std::size_t k = 0; k < scenario_.expectations.size(); ++k) {
    const Expectation& expect = scenario_.expectations[k];
    ExpectationResult out{expect.text(), expectation_state_[k] == 1, expectation_detail_[k],
                          first_shown_ms_[k]};
    switch (expect.kind) {
      case ExpectKind::no_false_verdicts:
        out.passed = result_.false_verdicts == 0;
        out.detail = std::to_string(result_.false_verdicts) + " false verdicts";
        break;
      case ExpectKind::no_missed_verdicts:
        out.passed = result_.missed_verdicts == 0;
        out.detail = std::to_string(result_.missed_verdicts) + " missed verdicts (" +
                     std::to_string(result_.missed_held_back) + " held back)";
        break;
      case ExpectKind::counter_at_least:
      case ExpectKind::counter_at_most: {
        const std::uint64_t value = counter(expect.counter);
        out.passed = expect.kind == ExpectKind::counter_at_least ? value >= expect.value : value <= expect.value;
        out.detail = expect.counter + " = " + std::to_string(value);
        break;
      }
      case ExpectKind::dissemination_rounds_max:
        out.passed = result_.dissemination.completed > 0 &&
                     result_.dissemination.rounds_max <= expect.value;
        out.detail = "max " + std::to_string(result_.dissemination.rounds_max) + " rounds over " +
                     std::to_string(result_.dissemination.completed) + " records";
        break;
      case ExpectKind::duplicate_factor_max:
        out.passed = result_.duplicate_factor * 1000.0 <= static_cast<double>(expect.value);
        out.detail = "duplicate factor " + std::to_string(result_.duplicate_factor);
        break;
      case ExpectKind::rotation_changes_max: {
        const auto& changes = rotation_changes_[k];
        const std::uint64_t most = changes.empty() ? 0 : *std::max_element(changes.begin(), changes.end());
        out.passed = most <= expect.value;
        out.detail = "at most " + std::to_string(most) + " changes at a node";
        break;
      }
      case ExpectKind::partitioned_flips_max:
        out.passed = result_.partitioned_flips_max <= expect.value;
        out.detail = "at most " + std::to_string(result_.partitioned_flips_max) + " flips at a node";
        break;
      default:
        if (expectation_state_[k] == -1 && out.detail.empty()) out.detail = "never checked";
        if (out.passed && first_shown_ms_[k]) out.detail = "after " + format_duration(*first_shown_ms_[k]);
        break;
    }
    result_.passed = result_.passed && out.passed;
    result_.expectations.push_back(std::move(out));
  }
}

gossip::Counters Run::total_counters() const {
  gossip::Counters total;
  for (const SimNode& node : nodes_) {
    add_counters(total, node.retired);
    if (node.agent) add_counters(total, node.core().counters());
  }
  return total;
}

void Run::start_measuring() {
  measuring_ = true;
  measure_from_ms_ = now_ms_;
  counters_baseline_ = total_counters();
  bytes_baseline_.clear();
  for (const SimNode& node : nodes_) {
    bytes_baseline_.push_back({node.gossip_bytes_sent, node.gossip_bytes_received, node.probe_bytes});
  }
}

void Run::finish_metrics() {
  const gossip::Counters total = total_counters();
  total.for_each([&](const char* name, std::uint64_t value) { result_.counters[name] = value; });
  result_.network = network_drops_;
  result_.gossip_loss = to_string(scenario_.sim.gossip_loss);
  const StreamCounters& tcp = streams_.counters();
  result_.tcp = {{"handshakes", tcp.handshakes},
                 {"syn_retries", tcp.syn_retries},
                 {"retransmissions", tcp.retransmissions},
                 {"frames_delayed", tcp.frames_delayed},
                 {"frames_held_in_order", tcp.frames_held_in_order},
                 {"connections_failed", tcp.connections_failed},
                 {"frames_on_adopted", tcp.frames_on_adopted}};
  // Bandwidth and duplicates over the metrics window only.
  std::uint64_t sent_max = 0, received_max = 0, probe_max = 0;
  double sent = 0, received = 0, probes = 0;
  for (const SimNode& node : nodes_) {
    const auto& base = bytes_baseline_.at(node.index);
    const std::uint64_t s = node.gossip_bytes_sent - base[0];
    const std::uint64_t r = node.gossip_bytes_received - base[1];
    const std::uint64_t p = node.probe_bytes - base[2];
    sent += static_cast<double>(s);
    received += static_cast<double>(r);
    probes += static_cast<double>(p);
    sent_max = std::max(sent_max, s);
    received_max = std::max(received_max, r);
    probe_max = std::max(probe_max, p);
  }
  result_.measured_from_ms = measure_from_ms_ - start_ms_;
  const DurationMs window = std::max<DurationMs>(now_ms_ - measure_from_ms_, 1);
  const double day = 86'400'000.0 / static_cast<double>(window);
  const double n = static_cast<double>(nodes_.size());
  result_.gossip_sent_per_day = {sent / n * day, static_cast<double>(sent_max) * day};
  result_.gossip_received_per_day = {received / n * day, static_cast<double>(received_max) * day};
  result_.probe_bytes_per_day = {probes / n * day, static_cast<double>(probe_max) * day};
  result_.floor_bytes_per_day = 2.0 * static_cast<double>(record_bytes_published_) * day;
  if (result_.floor_bytes_per_day > 0) {
    result_.gossip_over_floor = (result_.gossip_sent_per_day.mean + result_.gossip_received_per_day.mean) /
                                result_.floor_bytes_per_day;
  }
  const gossip::Counters& base = counters_baseline_;
  const double bodies = static_cast<double>(total.bodies_pushed_received + total.bodies_repair_received -
                                            base.bodies_pushed_received - base.bodies_repair_received);
  const double useful = static_cast<double>(total.bodies_useful - base.bodies_useful);
  result_.duplicate_factor = useful > 0 ? bodies / useful : 0;
  Dissemination& d = result_.dissemination;
  std::vector<std::uint32_t> rounds = dissemination_rounds_;
  std::sort(rounds.begin(), rounds.end());
  if (!rounds.empty()) {
    double sum = 0;
    for (std::uint32_t r : rounds) sum += r;
    d.rounds_mean = sum / static_cast<double>(rounds.size());
    d.rounds_p99 = rounds[(rounds.size() * 99) / 100];
    d.rounds_max = rounds.back();
  }
  std::uint32_t initial = 0;
  for (const SimNode& node : nodes_) initial += world_.servers[node.index].initial;
  d.rounds_bound = 2.0 * std::log2(std::max<double>(initial, 2));
  if (result_.healthy_reports > 0) {
    result_.healthy_report_bytes_mean /= static_cast<double>(result_.healthy_reports);
  }
  result_.signature_checks = verifier_.calls();
  result_.signature_verifications = verifier_.verifications();
  result_.roster_decodes_asked = roster_memo_.calls();
  result_.roster_decodes = roster_memo_.decodes();
  result_.records_interned = record_memo_.calls();
  result_.records_made = record_memo_.made();
  result_.plans_asked = plan_memo_.calls();
  result_.plans_made = plan_memo_.made();
  for (const SimNode& node : nodes_) {
    if (!node.agent) continue;
    const agent::VolumeStatus volume = node.agent->volume();
    result_.volume_nodes_tight += node.running() && volume.tight;
    result_.volume_probes_deferred += volume.probes_deferred;
    result_.volume_frames_refused += volume.frames_refused;
  }
  result_.scenario = scenario_.name;
  result_.seed = scenario_.seed;
  result_.nodes = static_cast<std::uint32_t>(nodes_.size());
  result_.duration_ms = scenario_.duration_ms;
  result_.command = options_.command;
}

}  // namespace mesh::sim
