// Builds the API's snapshot (node/api/snapshot.h) from what the daemon
// holds, on its strand: the agent's roster, verdicts and reports, the
// transport's links, the counters. The daemon publishes one every tick.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "node/agent/agent.h"
#include "node/api/snapshot.h"
#include "node/transport_settings.h"

namespace mesh::node {

// Probe outcomes the daemon saw, for /metrics (node/api/metrics_text.h).
class ProbeStats {
 public:
  ProbeStats();
  void record(const agent::ProbeOutcome& outcome);
  void fill(api::MetricsInput& metrics) const;

 private:
  std::vector<double> buckets_s_;
  std::array<std::vector<std::uint64_t>, 2> counts_;  // [connect, tls], cumulative
  std::array<double, 2> sum_s_{};
  std::array<std::uint64_t, 2> count_{};
  std::map<std::string, std::uint64_t> results_;
};

struct SnapshotInputs {
  std::string node;
  std::string version;
  UnixMs now_ms = 0;
  std::uint64_t index = 0;
  const agent::Agent* agent = nullptr;
  const TransportStats* transport = nullptr;
  const ProbeStats* probes = nullptr;
  UnixMs started_ms = 0;
  bool starting = false;  // docs/API.md, "Just started"
  std::vector<api::HealthProblem> problems;
  std::optional<api::SyncStatus> panel_sync;  // the panel worker's, when [panel] is on
  std::optional<api::AlertStatus> alerts;     // likewise for [alerts]
};

std::shared_ptr<api::ApiSnapshot> build_api_snapshot(const SnapshotInputs& inputs);

// True when route membership (members or degradation) differs between two
// evaluations: the API's index moves then. Null counts as no routes.
bool membership_changed(const verdict::Evaluation* before, const verdict::Evaluation* after);

}  // namespace mesh::node
