// One simulated server: its machine, listener, service and clock (what
// meshsim models), and the node agent its daemon would run (node/agent/:
// the gossip core, probe ledger, report schedule and verdicts, the same code
// as the daemon's), with an in-memory model of its storage.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "common/rng.h"
#include "gossip/core.h"
#include "node/agent/agent.h"
#include "node/agent/store.h"
#include "record/keys.h"

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
  std::unique_ptr<agent::Agent> agent;
  gossip::Counters retired;      // counters of cores replaced by restarts

  // Storage model: kept for nodes whose agent restarts in the scenario.
  bool persistence = false;
  agent::MemoryStore store;
  std::optional<Rng> metrics_rng;  // the machine's plausible metrics

  // Verdicts: evaluated only for nodes in the check set.
  bool checked = false;
  bool partitioned_shown = false;        // its evaluation's `partitioned` at the last check
  std::uint64_t partitioned_flips = 0;   // how often that changed

  std::uint64_t gossip_bytes_sent = 0;
  std::uint64_t gossip_bytes_received = 0;
  std::uint64_t probe_bytes = 0;
  UnixMs last_unfine_ms = kNeverMs;  // last virtual time it was not "fine" (false-verdict rule)
  // Since when, without a break, blocks leave a whole country unable to
  // connect to it or its machine is off (missed-verdict rule); kNeverMs
  // while neither holds.
  UnixMs cut_off_since_ms = kNeverMs;

  UnixMs clock(UnixMs virtual_now) const { return virtual_now + skew_ms; }
  bool running() const { return active && machine_up && agent_running && agent != nullptr; }
  // Listener, service and machine all up, and in the fleet.
  bool healthy() const { return active && machine_up && listener_up && service_up; }
  // REQUIRES: agent != nullptr.
  const gossip::GossipCore& core() const { return agent->core(); }
};

// into += from, counter by counter.
void add_counters(gossip::Counters& into, const gossip::Counters& from);

}  // namespace mesh::sim
