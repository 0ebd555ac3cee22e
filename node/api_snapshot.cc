#include "node/api_snapshot.h"

#include <algorithm>
#include <tuple>

#include "gossip/store.h"

namespace mesh::node {
namespace {

constexpr double kBucketsS[] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};

void add_observers(api::ApiSnapshot& snapshot, const agent::Agent& agent) {
  const Roster& roster = *snapshot.roster;
  const auto& unreliable = snapshot.evaluation->unreliable_observers;
  for (std::uint32_t observer = 0; observer < roster.servers.size(); ++observer) {
    auto held = agent.core().report_of(observer);
    if (!held || held->report == nullptr || held->report->view.roster_version != roster.version) continue;
    const ServerEntry& entry = roster.servers[observer];
    const bool discarded = std::find(unreliable.begin(), unreliable.end(), entry.id) != unreliable.end();
    for (const ProbeResult& result : held->report->view.results) {
      if (result.target >= snapshot.servers.size() || result.target == observer) continue;
      snapshot.servers[result.target].observers.push_back(
          api::ObserverView{entry.id, entry.country, result.fail_streak, result.ok_streak, result.reason,
                            result.last_probe_ms, discarded, result.recovered});
    }
  }
}

void add_servers(api::ApiSnapshot& snapshot, const agent::Agent& agent) {
  const Roster& roster = *snapshot.roster;
  snapshot.servers.resize(roster.servers.size());
  for (std::uint32_t i = 0; i < roster.servers.size(); ++i) {
    api::ServerState& state = snapshot.servers[i];
    state.entry = &roster.servers[i];
    state.verdict = &snapshot.evaluation->servers[i];
    if (auto held = agent.core().report_of(i)) {
      state.last_report_ms = held->envelope->timestamp_ms;
      if (held->report != nullptr) {
        state.metrics = held->report->metrics;
        state.self_check = held->report->self_check;
      }
    }
  }
  add_observers(snapshot, agent);
}

void add_counters(api::MetricsInput& metrics, const SnapshotInputs& in) {
  const gossip::Counters& core = in.agent->core().counters();
  metrics.frames_sent = core.frames_sent;
  metrics.frames_received = core.frames_received;
  metrics.bytes_sent = core.bytes_sent;
  metrics.bytes_received = core.bytes_received;
  auto drop = [&](const char* reason, std::uint64_t count) { metrics.drops.emplace_back(reason, count); };
  drop("frame_oversize", core.frames_oversize);
  drop("frame_malformed", core.frames_malformed);
  drop("frame_unknown_sender", core.frames_unknown_sender);
  drop("frame_undecryptable", core.frames_undecryptable);
  drop("frame_replayed", core.frames_replayed);
  drop("record_stale", core.records_stale);
  drop("record_bad_signature", core.records_bad_signature);
  drop("record_malformed", core.records_malformed);
  drop("record_unknown_origin", core.records_unknown_origin);
  drop("record_future", core.records_future);
  drop("record_invalid_payload", core.records_invalid_payload);
  drop("outbox_full", core.outbox_dropped);
  if (in.transport != nullptr) {
    const TransportCounters& t = in.transport->counters;
    metrics.inbound_unauthenticated = in.transport->inbound_unauthenticated;
    metrics.inbound_members = in.transport->inbound_connections - in.transport->inbound_unauthenticated;
    drop("transport_queue_full", t.frames_dropped_queue_full);
    drop("transport_queue_stale", t.frames_dropped_stale);
    drop("transport_oversize", t.frames_oversize);
    drop("transport_read_timeout", t.frames_read_timeout);
    drop("transport_inbound_refused", t.inbound_refused);
    drop("transport_inbound_evicted", t.inbound_evicted);
    drop("transport_inbound_unauthenticated", t.inbound_unauthenticated_closed);
  }
  drop("volume_cap", in.agent->volume().frames_refused);
  if (in.probes != nullptr) in.probes->fill(metrics);
}

}  // namespace

ProbeStats::ProbeStats() : buckets_s_(std::begin(kBucketsS), std::end(kBucketsS)) {
  for (auto& counts : counts_) counts.assign(buckets_s_.size(), 0);
}

void ProbeStats::record(const agent::ProbeOutcome& outcome) {
  ++results_[outcome.failure == ProbeFailure::none ? "ok" : to_string(outcome.failure)];
  const DurationMs stages[] = {outcome.connect_ms, outcome.handshake_ms};
  for (std::size_t stage = 0; stage < 2; ++stage) {
    if (stages[stage] < 0) continue;
    const double seconds = static_cast<double>(stages[stage]) / 1000.0;
    for (std::size_t b = 0; b < buckets_s_.size(); ++b) counts_[stage][b] += seconds <= buckets_s_[b];
    sum_s_[stage] += seconds;
    ++count_[stage];
  }
}

void ProbeStats::fill(api::MetricsInput& metrics) const {
  metrics.duration_buckets_s = buckets_s_;
  metrics.duration_counts = counts_;
  metrics.duration_sum_s = sum_s_;
  metrics.duration_count = count_;
  metrics.probe_results.assign(results_.begin(), results_.end());
}

std::shared_ptr<api::ApiSnapshot> build_api_snapshot(const SnapshotInputs& in) {
  auto snapshot = std::make_shared<api::ApiSnapshot>();
  snapshot->node = in.node;
  snapshot->version = in.version;
  snapshot->taken_ms = in.now_ms;
  snapshot->index = in.index;
  snapshot->started_ms = in.started_ms;
  snapshot->starting = in.starting;
  snapshot->problems = in.problems;
  const agent::Agent& agent = *in.agent;
  snapshot->roster = agent.core().shared_roster();
  auto evaluation = agent.verdicts();
  if (snapshot->roster && evaluation && evaluation->roster_version == snapshot->roster->version &&
      evaluation->servers.size() == snapshot->roster->servers.size()) {
    snapshot->evaluation = std::move(evaluation);
    add_servers(*snapshot, agent);
  }
  const gossip::Digest digest = agent.core().digest();
  snapshot->digest_hex = to_hex(ByteView(digest.data(), digest.size()));
  snapshot->records = agent.core().record_count();
  snapshot->held.reserve(snapshot->records);
  agent.core().for_each_record([&](const gossip::HeldRecord& held) {
    const Envelope& envelope = *held.envelope;
    snapshot->held.push_back(api::HeldEntry{envelope.kind, envelope.origin, envelope.seq,
                                            envelope.timestamp_ms, gossip::fingerprint32(envelope.signature)});
  });
  std::sort(snapshot->held.begin(), snapshot->held.end(), [](const auto& a, const auto& b) {
    return std::tie(a.kind, a.origin) < std::tie(b.kind, b.origin);
  });
  if (in.transport != nullptr) {
    for (const PeerLinkStats& link : in.transport->peers) {
      snapshot->peers.push_back(api::PeerState{link.peer, link.connected, link.last_frame_ms});
    }
  }
  const agent::VolumeStatus volume = agent.volume();
  snapshot->volume_used_bytes = volume.charged_bytes;
  snapshot->volume_cap_bytes = volume.cap_bytes;
  snapshot->volume_tight = volume.tight;
  const agent::ClockState clock = agent.clock(in.now_ms);
  snapshot->clock_suspect = agent::to_string(clock.suspect);
  snapshot->clock_offset_ms = clock.offset_ms;
  snapshot->warming = agent.warming(in.now_ms);
  add_counters(snapshot->metrics, in);
  snapshot->panel_sync = in.panel_sync;
  snapshot->alerts = in.alerts;
  return snapshot;
}

bool membership_changed(const verdict::Evaluation* before, const verdict::Evaluation* after) {
  if (before == nullptr || after == nullptr) return before != after;
  return before->roster_version != after->roster_version || before->routes != after->routes;
}

}  // namespace mesh::node
