// What a run measured (docs/SIMULATOR.md, "Output"): snapshots of every
// node's digest and verdicts, the expectations' outcomes, bandwidth,
// dissemination, false verdicts and the summed drop counters. Plain values;
// output.h turns them into JSON or a human summary.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/server_id.h"
#include "common/time.h"
#include "verdict/evaluation.h"

namespace mesh::sim {

inline constexpr std::size_t kVerdictExamplesMax = 20;  // false and missed verdicts listed

struct ServerBrief {
  ServerId id;
  verdict::ServerStatus status = verdict::ServerStatus::ok;
  verdict::StatusFlags flags;  // every condition that holds (held back: insufficient_evidence)
  std::uint32_t failing = 0;
  std::uint32_t eligible = 0;
  std::vector<verdict::CountryTally> by_country;  // the split of the vote by observer country
};

struct RouteBrief {
  std::string route_id;
  std::vector<ServerId> members;
  bool degraded = false;
};

struct NodeSnapshot {
  ServerId id;
  std::string digest_hex;          // the core's record-set digest
  std::string verdict_digest;      // evaluation_digest(); empty when not evaluated
  std::vector<ServerBrief> servers;
  std::vector<RouteBrief> routes;
  std::vector<ServerId> unreliable_observers;
  bool partitioned = false;        // the node's evaluation holds every unreachable verdict back
};

struct Snapshot {
  DurationMs at_ms = 0;
  std::uint32_t running_nodes = 0;
  std::uint32_t digest_groups = 0;   // distinct digests among running nodes
  std::uint32_t evaluated_nodes = 0;
  std::uint32_t verdict_groups = 0;  // distinct evaluation digests among evaluated nodes
  std::vector<NodeSnapshot> nodes;   // the first snapshot_nodes running nodes
};

struct ExpectationResult {
  std::string text;
  bool passed = false;
  std::string detail;                // why it failed, or what was measured
  std::optional<DurationMs> time_ms; // status: time to verdict; digests_agree: time to agree
};

// A verdict the oracle disagrees with (docs/SIMULATOR.md, "Checks"): false
// (a fine server shown unreachable or unavailable) or missed (a server cut
// off from a whole country for longer than the detection bound, shown in
// rotation).
struct WrongVerdict {
  DurationMs at_ms = 0;
  ServerId node;    // where the verdict was shown
  ServerId server;  // the server it was about
  verdict::ServerStatus status = verdict::ServerStatus::ok;
  bool held_back = false;  // missed: shown ok with insufficient_evidence (held back, not unseen)
};

struct PerNodeDay {
  double mean = 0;
  double max = 0;
};

struct Dissemination {
  std::uint64_t records = 0;     // records tracked (published while the fleet held a roster)
  std::uint64_t completed = 0;   // reached every node that was running when it was published
  std::uint64_t incomplete = 0;  // superseded or cut off (stopped node, partition) first
  double rounds_mean = 0;        // gossip ticks from publish to the last node
  std::uint32_t rounds_p99 = 0;
  std::uint32_t rounds_max = 0;
  DurationMs ms_max = 0;
  double rounds_bound = 0;       // 2 log2(N)
};

struct RunResult {
  std::string scenario;
  std::uint64_t seed = 0;
  std::uint32_t nodes = 0;       // servers that took part (initial + added)
  DurationMs duration_ms = 0;
  std::string command;           // how to reproduce this run

  std::vector<Snapshot> snapshots;
  std::vector<ExpectationResult> expectations;
  bool passed = true;

  std::uint64_t checks = 0;               // periodic verdict checks made
  std::uint32_t checked_nodes = 0;        // nodes evaluated at each check
  std::uint64_t evaluations = 0;          // Evaluator::evaluate calls
  std::uint64_t evaluations_memoized = 0; // reused for a node with the same digest and clock
  std::uint64_t false_verdicts = 0;       // (node, server, check) triples
  std::vector<WrongVerdict> false_examples;
  DurationMs false_verdict_grace_ms = 0;
  std::uint64_t missed_verdicts = 0;      // (node, server, check) triples
  std::uint64_t missed_held_back = 0;     // of which the node held the verdict back (insufficient_evidence)
  std::vector<WrongVerdict> missed_examples;
  DurationMs detection_bound_ms = 0;      // agent::detection_bound_ms of the roster's parameters
  std::uint64_t partitioned_flips_max = 0;  // most changes of a checked node's `partitioned` flag

  DurationMs measured_from_ms = 0;        // bandwidth, duplicates, dissemination: from here to the end
  PerNodeDay gossip_sent_per_day;         // bytes per node per simulated day
  PerNodeDay gossip_received_per_day;
  PerNodeDay probe_bytes_per_day;
  double floor_bytes_per_day = 0;         // per node: each record received once and sent once
  double gossip_over_floor = 0;           // (mean sent + mean received) / floor
  double duplicate_factor = 0;            // bodies received / bodies that stored a new record
  Dissemination dissemination;

  std::uint64_t healthy_reports = 0;      // reports with a clean self-check and no failing target
  std::uint64_t healthy_report_bytes_max = 0;  // signed record, encoded
  double healthy_report_bytes_mean = 0;

  std::map<std::string, std::uint64_t> counters;  // gossip counters summed over every core
  std::map<std::string, std::uint64_t> network;   // frames dropped by the network model, by cause
  std::string gossip_loss;                        // the loss model of gossip frames (SimParams)
  std::map<std::string, std::uint64_t> tcp;       // what TCP did to gossip frames (StreamCounters)
  bool signatures_memoized = true;
  std::uint64_t signature_checks = 0;     // verify() calls made by the cores
  std::uint64_t signature_verifications = 0;  // of which ran libsodium (unique records)
  std::uint64_t roster_decodes_asked = 0;  // roster payload decodes asked by the cores
  std::uint64_t roster_decodes = 0;        // of which were decoded (unique roster payloads)
  std::uint64_t records_interned = 0;      // accepted reports stored through the shared memo
  std::uint64_t records_made = 0;          // of which were new objects (unique records)
  std::uint64_t plans_asked = 0;           // witness plans asked by the agents
  std::uint64_t plans_made = 0;            // of which were made (one per roster and epoch)

  // The agents' daily volume accounts (docs/CONFIG.md, "Daily volume cap").
  std::uint32_t volume_nodes_tight = 0;     // running nodes whose probes were slowed at the end
  std::uint64_t volume_probes_deferred = 0; // probes not started for the cap, all nodes
  std::uint64_t volume_frames_refused = 0;  // frames not sent for the cap, all nodes

  double wall_seconds = 0;                // only printed with --timing
};

}  // namespace mesh::sim
