// What the API answers from (docs/API.md): an immutable snapshot of the
// node's state, built on the daemon's strand (node/api_snapshot_builder.h)
// and read by any number of API requests without a lock. Plain values and
// shared immutable pieces; the JSON bodies of the unfiltered endpoints are
// rendered once per snapshot, on first use (node/api/render.h).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/server_id.h"
#include "common/time.h"
#include "node/api/panel_status.h"
#include "node/api/shared_body.h"
#include "record/report.h"
#include "record/roster.h"
#include "verdict/evaluation.h"

namespace mesh::api {

// One observer's latest result for a target, from its latest report.
struct ObserverView {
  ServerId id;
  std::string country;
  std::uint32_t fail_streak = 0;
  std::uint32_t ok_streak = 0;
  ProbeFailure reason = ProbeFailure::none;
  UnixMs last_probe_ms = 0;
  bool unreliable = false;  // its votes are discarded
  bool recovered = false;   // gets through only lately (ProbeResult::recovered)
};

struct ServerState {
  const ServerEntry* entry = nullptr;       // into ApiSnapshot::roster
  const verdict::ServerVerdict* verdict = nullptr;  // into ApiSnapshot::evaluation
  std::optional<UnixMs> last_report_ms;     // nullopt: never received
  std::optional<Metrics> metrics;           // from the latest report
  std::optional<SelfCheck> self_check;
  std::vector<ObserverView> observers;      // roster order of the observers
};

// One record this node holds (GET /v1/mesh/records).
struct HeldEntry {
  RecordKind kind = RecordKind::report;
  std::string origin;        // a server id, or "operator" for the roster
  std::uint64_t seq = 0;
  UnixMs signed_ms = 0;      // the record's own timestamp
  std::uint32_t fingerprint = 0;  // the first 4 bytes of its signature, big-endian
};

struct PeerState {
  ServerId id;
  bool connected = false;
  UnixMs last_frame_ms = 0;  // 0: never
};

// Counters for /metrics, gathered from the agent, the core and the transport.
struct MetricsInput {
  std::vector<std::pair<std::string, std::uint64_t>> probe_results;  // result -> count
  // Probe stage durations: bucket upper bounds in seconds, cumulative counts.
  std::vector<double> duration_buckets_s;
  std::array<std::vector<std::uint64_t>, 2> duration_counts;  // [connect, tls], cumulative per bucket
  std::array<double, 2> duration_sum_s{};
  std::array<std::uint64_t, 2> duration_count{};
  std::uint64_t frames_sent = 0, frames_received = 0, bytes_sent = 0, bytes_received = 0;
  // Accepted gossip connections open now: members' (adopted) and not yet.
  std::uint64_t inbound_members = 0, inbound_unauthenticated = 0;
  std::vector<std::pair<std::string, std::uint64_t>> drops;  // reason -> count
};

// A problem that keeps the node from doing its whole job while it runs
// (docs/API.md, GET /healthz): a roster file refused, this node missing
// from the roster or listed there with another key.
// Every code a HealthProblem may have (/metrics lists each, 0 or 1).
inline constexpr const char* kHealthProblemCodes[] = {"roster_file_refused", "not_in_roster", "key_mismatch"};

struct HealthProblem {
  std::string code;     // one of kHealthProblemCodes
  std::string message;  // what is wrong and what to do, as the log says it
  bool operator==(const HealthProblem&) const = default;
};

struct ApiSnapshot {
  std::string node;
  std::string version;              // of meshnode
  UnixMs taken_ms = 0;              // the node's clock when built; ages count from here
  std::uint64_t index = 0;          // grows when route membership changes (X-Meshnode-Index)
  UnixMs started_ms = 0;            // when this node started
  // The node has just started and may not have heard from the fleet yet:
  // its no_data verdicts may be its own silence (X-Meshnode-Starting).
  bool starting = false;
  std::vector<HealthProblem> problems;  // empty: /healthz answers 200
  std::shared_ptr<const Roster> roster;                 // null before a roster is held
  std::shared_ptr<const verdict::Evaluation> evaluation;  // null before the first evaluation
  std::vector<ServerState> servers;                     // roster order; empty without both
  std::string digest_hex;
  std::size_t records = 0;
  std::vector<HeldEntry> held;      // sorted by kind, then origin
  std::vector<PeerState> peers;     // sorted by id
  std::uint64_t volume_used_bytes = 0;
  std::uint64_t volume_cap_bytes = 0;
  bool volume_tight = false;
  std::string clock_suspect = "none";  // agent::ClockSuspect: none, ahead, behind
  DurationMs clock_offset_ms = 0;
  bool warming = false;  // agent::Agent::warming (node/agent/warm_up.h)
  MetricsInput metrics;
  std::optional<SyncStatus> panel_sync;  // nullopt: no [panel]
  std::optional<AlertStatus> alerts;     // nullopt: no [alerts]

  // Bodies rendered once per snapshot (node/api/render.h), on first use.
  mutable std::once_flag routes_once, servers_once;
  mutable std::shared_ptr<const SharedBody> routes_json, servers_json;

  const ServerState* server(std::string_view id) const;
};

}  // namespace mesh::api
