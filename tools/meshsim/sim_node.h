// One simulated server: its machine, listener, service and agent state, the
// real GossipCore its daemon would run, a model of its storage (the records
// Effects told it to persist), its prober and its verdict Evaluator.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "gossip/core.h"
#include "gossip/rng.h"
#include "record/keys.h"
#include "verdict/engine.h"
#include "verdict/probe_ledger.h"

namespace mesh::sim {

inline constexpr UnixMs kNeverMs = INT64_MIN / 4;

struct SimNode {
  std::uint32_t index = 0;  // position in World::servers
  ServerId id;
  KeyPair key;

  bool active = false;        // in the fleet: added and not removed
  bool machine_up = true;     // node_down turns the whole machine off
  bool agent_running = false; // the meshnode daemon
  bool listener_up = true;    // the traffic listener (443)
  bool service_up = true;     // the VPN service
  DurationMs skew_ms = 0;     // its clock = virtual time + skew

  std::uint64_t boot_counter = 0;
  std::uint32_t generation = 0;  // bumped at every agent stop/start: older timers are ignored
  std::unique_ptr<gossip::GossipCore> core;
  gossip::Counters retired;      // counters of cores replaced by restarts

  // Storage model: kept for nodes whose agent restarts in the scenario.
  bool persistence = false;
  std::map<std::pair<RecordKind, ServerId>, Bytes> stored;

  verdict::ProbeLedger prober;            // streaks kept as the daemon keeps them
  std::uint64_t prober_roster_version = 0; // roster the prober last forgot removed targets for
  std::uint64_t report_seq = 0;
  std::optional<gossip::Rng> metrics_rng;

  // Verdicts: evaluated only for nodes in the check set.
  bool checked = false;
  std::optional<verdict::Evaluator> evaluator;
  std::vector<std::uint64_t> fed_seq;  // per roster index: seq upserted (0 = none)

  std::uint64_t gossip_bytes_sent = 0;
  std::uint64_t gossip_bytes_received = 0;
  std::uint64_t probe_bytes = 0;
  UnixMs last_unfine_ms = kNeverMs;  // last virtual time it was not "fine" (false-verdict rule)

  UnixMs clock(UnixMs virtual_now) const { return virtual_now + skew_ms; }
  bool running() const { return active && machine_up && agent_running && core != nullptr; }
  // Listener, service and machine all up, and in the fleet.
  bool healthy() const { return active && machine_up && listener_up && service_up; }
};

// into += from, counter by counter.
void add_counters(gossip::Counters& into, const gossip::Counters& from);

}  // namespace mesh::sim
