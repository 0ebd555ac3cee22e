// A simulation scenario: the fleet, the roster parameters, the network, the
// timeline of events, the snapshot times and the expectations. Built by a
// built-in (builtin.h) or read from a TOML file (scenario_file.h); the
// format is documented in docs/SIMULATOR.md. Times are relative to the start
// of the run (virtual milliseconds).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/server_id.h"
#include "common/time.h"
#include "node/agent/config.h"
#include "node/agent/wire_cost.h"
#include "record/roster.h"
#include "verdict/evaluation.h"

namespace mesh::sim {

inline constexpr std::size_t kNodesMax = kRosterServersMax;
inline constexpr std::size_t kEventsMax = 10'000;
inline constexpr std::size_t kSnapshotsMax = 256;
inline constexpr std::size_t kExpectationsMax = 1'000;
inline constexpr std::size_t kLinkOverridesMax = 200;  // link classes fit in one byte
inline constexpr std::size_t kCountriesMax = 64;
inline constexpr DurationMs kRunDurationMsMax = 7LL * 86'400'000;  // one simulated week

// Per-link network behaviour. Loss applies to each packet independently.
struct LinkSpec {
  std::uint32_t loss_permille = 0;
  DurationMs latency_ms = 20;
  DurationMs jitter_ms = 5;  // extra delay uniform in [0, jitter_ms]
  bool operator==(const LinkSpec&) const = default;
};

// A set of servers: everyone, or the union of named servers and countries.
struct Selector {
  bool all = false;
  std::vector<ServerId> servers;
  std::vector<std::string> countries;  // ISO codes, upper case
  bool empty() const { return !all && servers.empty() && countries.empty(); }
};

struct LinkOverride {
  Selector from;
  Selector to;
  LinkSpec link;
};

struct ServerSpec {
  ServerId id;
  std::string country;
  std::vector<std::string> routes;  // route ids; empty: the country route and "global"
};

// Either explicit servers (and routes), or generated counts.
struct FleetSpec {
  std::vector<ServerSpec> servers;
  std::vector<Route> routes;  // explicit fleets only; generated: one per country + "global"
  std::uint32_t generated_nodes = 0;
  std::uint32_t generated_countries = 0;
};

enum class EventKind : std::uint8_t {
  block,           // drop traffic from `from` to `servers` (and back when both_directions)
  unblock,         // lift the block named `name` ("" lifts every block on `servers`)
  stop_agent,      // the daemon stops: no ticks, reports, probes, gossip; listener keeps working
  start_agent,     // the daemon restarts: new core, boot counter + 1, loads its stored records
  service_down,    // the VPN service stops (self-check says so)
  service_up,
  listener_down,   // the traffic listener stops: probes refused, self-check says so
  listener_up,
  node_down,       // the machine goes off: agent stopped and nothing answers
  node_up,         // the machine comes back: listener up, agent restarts as in start_agent
  unreliable_on,   // `servers` lose their own outbound traffic to half their neighbours
  unreliable_off,
  clock_skew,      // `servers` run their clock skew_ms ahead (negative: behind)
  partition,       // `groups` cannot talk to each other (unlisted servers: one more group)
  heal,            // the partition ends
  set_link,        // links from `from` to `to` (both selectors) get `link` from now on
  roster_add,      // the operator signs a roster with `add` appended; new nodes start
  roster_remove,   // the operator signs a roster without `servers`; their machines stop
  inject_forged,   // a non-member injects forged frames and records into `servers`
};
const char* to_string(EventKind kind);

// What a block touches: every connection, only probes (port 443), or only
// gossip (the gossip port).
// sni: TLS handshakes sending the target's SNI are reset after the
// ClientHello (a DPI box); TCP connects and gossip pass.
enum class BlockPort : std::uint8_t { all, probe, gossip, sni };
const char* to_string(BlockPort port);

struct Event {
  DurationMs at_ms = 0;
  EventKind kind = EventKind::block;
  std::string name;               // block name (block / unblock)
  Selector servers;               // the servers the event applies to
  Selector from;                  // block observers; set_link sources
  Selector to;                    // set_link destinations
  bool both_directions = false;   // block: also drop traffic from the servers to `from`
  // block: a stateful border firewall instead of dropped packets: connections
  // opened from `from` to `servers` fail, those opened the other way work.
  bool connections_only = false;
  BlockPort port = BlockPort::all;  // block: which connections it touches
  DurationMs skew_ms = 0;         // clock_skew
  std::vector<Selector> groups;   // partition
  LinkSpec link;                  // set_link
  std::vector<ServerSpec> add;    // roster_add
  std::uint32_t tamper_frames = 8;  // inject_forged: in-flight frames to corrupt
  std::string origin;             // "file:line" when read from a scenario file
};

// digests_agree: by default, records signed at least this long ago must be everywhere.
inline constexpr DurationMs kConvergedLagMs = 60'000;

enum class ExpectKind : std::uint8_t {
  status,             // at at_ms every running node shows `server` with `status`
  status_during,      // at every check in [from_ms, to_ms] likewise
  no_false_verdicts,  // no false verdict on any node during the whole run
  no_missed_verdicts, // no missed verdict on any checked node during the whole run
  digests_agree,      // at some tick in [at_ms, to_ms] every running node holds every record signed >= lag_ms before
  unreliable,         // at at_ms every running node lists `server` as an unreliable observer
  in_rotation,        // at at_ms `server` is a member of `route` on every running node
  out_of_rotation,    // at at_ms `server` is not a member of `route` on any running node
  counter_at_least,   // the counter `counter`, summed over nodes, is >= value at the end
  counter_at_most,    // ... is <= value (counters: the gossip ones, then the simulator's)
  dissemination_rounds_max,  // every completed record reached all nodes in <= value rounds
  duplicate_factor_max,      // bodies received per useful body <= value_milli / 1000
  partitioned_flips_max,     // no checked node's `partitioned` flag changed more than value times
  rotation_changes_max,      // `server` entered or left `route` at most value times at every checked node
};
const char* to_string(ExpectKind kind);

struct Expectation {
  ExpectKind kind = ExpectKind::status;
  ServerId server;
  verdict::ServerStatus status = verdict::ServerStatus::ok;
  std::string route;
  std::string counter;
  DurationMs at_ms = 0;
  DurationMs from_ms = 0;
  DurationMs to_ms = 0;
  DurationMs since_ms = -1;  // status: measure time-to-verdict from here (-1: last event before at)
  DurationMs lag_ms = kConvergedLagMs;  // digests_agree: records signed at least this long before must be held
  std::uint64_t value = 0;
  std::string origin;  // "file:line" when read from a scenario file
  bool exclude_server = false;  // point checks skip the node `server` itself (its own view)
  ServerId node;                // non-empty: point checks look at this node's view only
  std::string text() const;  // one line for reports ("status de-1 unreachable at 20m")
};

// Simulator knobs that are not roster parameters.
// What a lost packet does to a gossip frame (docs/SIMULATOR.md, "Network"):
// `stream` is TCP, as the daemon sends (the frame arrives late, in order);
// `frames` is a stress setting, each frame a datagram lost with the link's loss.
enum class GossipLoss : std::uint8_t { stream, frames };
const char* to_string(GossipLoss loss);

struct SimParams {
  DurationMs tick_interval_ms = 1'000;    // the core's tick (CoreConfig::tick_interval_ms)
  DurationMs check_interval_ms = 30'000;  // verdicts of every node are evaluated this often
  std::uint32_t tls_every = agent::kDefaultTlsEvery;  // AgentConfig::tls_every: a country's TLS turn, in probe intervals
  std::uint32_t syn_attempts = 3;         // TCP connect attempts within the probe deadline
  DurationMs probe_timeout_ms = agent::kDefaultProbeConnectTimeoutMs;  // an unanswered probe ends then
  // Bytes of a probe, both directions, as the prober estimates them
  // (node/agent/wire_cost.h): SYN, SYN-ACK, RST (214); up to a
  // HelloRetryRequest (752; docs/PROTOCOL.md, "The TLS stage").
  std::uint32_t tcp_probe_bytes = static_cast<std::uint32_t>(agent::tcp_connect_probe_wire_bytes());
  std::uint32_t tls_probe_bytes = static_cast<std::uint32_t>(
      agent::tls_probe_wire_bytes(agent::kTypicalClientHelloBytes, agent::kTypicalHelloRetryBytes));
  GossipLoss gossip_loss = GossipLoss::stream;
  std::size_t overlay_rings = 2;          // CoreConfig overrides
  DurationMs sync_interval_ms = 30'000;
  // Nodes whose verdicts are evaluated at checks and snapshots: 0 = all.
  // Large fleets default to an evenly spaced subset (docs/SIMULATOR.md);
  // digests are always compared across every node.
  std::uint32_t check_nodes = 0;
  // Bandwidth, duplicates and dissemination are measured from here on, so
  // that start-up (every node installing the roster at once) does not
  // weigh on the steady-state figures. Clamped to half the run.
  DurationMs measure_from_ms = 120'000;
};

struct Scenario {
  std::string name;
  std::uint64_t seed = 1;
  DurationMs duration_ms = 3'600'000;
  UnixMs start_unix_ms = 1'767'225'600'000;  // 2026-01-01T00:00:00Z, an epoch boundary
  FleetSpec fleet;
  Parameters params;
  SimParams sim;
  LinkSpec link_defaults;
  std::vector<LinkOverride> link_overrides;
  std::vector<Event> events;           // sorted by at_ms (stable)
  std::vector<DurationMs> snapshots;   // sorted
  std::vector<Expectation> expectations;
};

}  // namespace mesh::sim
