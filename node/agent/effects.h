// What the node agent (node/agent/agent.h) hands its shell and what the
// shell hands back: probe requests and their outcomes, self-check results,
// the storage batch, and the effects of one event. Plain values: the daemon
// (node/) and meshsim (tools/meshsim) both fill and read them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/bytes.h"
#include "common/server_id.h"
#include "common/time.h"
#include "gossip/core.h"
#include "record/report.h"
#include "record/roster.h"
#include "verdict/evaluation.h"

namespace mesh::agent {

// A probe for the shell to run the way a user's app connects
// (docs/PROTOCOL.md, "Probes"): TCP connect to `address`, then, when `tls`,
// a TLS handshake sending `sni` (no certificate verification), then close.
struct ProbeRequest {
  std::uint64_t probe_id = 0;  // echoed in the outcome
  ServerId target;             // the target's server id
  Endpoint address;            // the roster's probe endpoint of the target
  std::string sni;             // the roster's SNI of the target
  bool tls = false;
};

// What one probe found. The shell fills every field it measured.
struct ProbeOutcome {
  std::uint64_t probe_id = 0;  // from the request
  ServerId target;
  ProbeFailure failure = ProbeFailure::none;  // none: every stage asked for succeeded
  bool tls = false;                // a TLS stage was asked for
  DurationMs connect_ms = -1;      // TCP connect time; -1: not connected
  DurationMs handshake_ms = -1;    // TLS handshake time; -1: not completed (or not asked)
  std::uint64_t wire_bytes = 0;    // estimated bytes on the wire, both directions (node/agent/wire_cost.h)
};

// The node's look at itself (docs/PROTOCOL.md, "Report payload").
struct SelfCheckOutcome {
  SelfCheck self_check;
  Metrics metrics;
};

// Writes for the shell's storage, applied atomically (node/agent/store.h).
// Records are keyed by (kind, origin); state values by short text keys.
struct StoreBatch {
  std::vector<gossip::PersistRecord> put_records;
  std::vector<std::pair<RecordKind, ServerId>> erase_records;
  std::vector<std::pair<std::string, Bytes>> put_state;
  std::vector<std::string> erase_state;

  bool empty() const {
    return put_records.empty() && erase_records.empty() && put_state.empty() && erase_state.empty();
  }
};

// The effects of one event, for the shell to carry out in order: store the
// batch (before anything that depends on it leaves the node), send the
// frames, start the probes, run a self-check when asked.
struct AgentEffects {
  // Sealed gossip frames; `to` is the peer's index in Agent::roster() as it
  // stands after this call.
  std::vector<gossip::Outgoing> send;
  StoreBatch store;
  std::vector<ProbeRequest> probes;
  // Run the self-check now and hand the result to Agent::on_self_check;
  // the node's next report is built from it.
  bool self_check_due = false;
  // This node's own report record, signed in this call (already in `store`).
  std::shared_ptr<const Bytes> published;
  bool roster_changed = false;  // a new roster was accepted
  // on_frame: the member that sealed the frame (gossip::Effects::sender),
  // by id; empty when the frame did not open. The shell may write to it on
  // the connection the frame came on (docs/PROTOCOL.md §2a).
  ServerId frame_sender;
  // Failed paths are healing (gossip::Effects::paths_healing: a gossip
  // link came back after a dead spell, or a probe reached the host of a
  // peer whose link is dead): the shell may retry at once the connections
  // it is backing off from.
  bool paths_healing = false;
  // A new verdict snapshot: some server's status, counts, badges, a route's
  // membership or the unreliable observers changed. Immutable; null when
  // nothing changed.
  std::shared_ptr<const verdict::Evaluation> verdicts;
};

}  // namespace mesh::agent
