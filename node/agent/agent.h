// Agent: one meshnode node as pure logic (README, "Layout"; docs/PROTOCOL.md,
// "The node agent"). It owns the gossip core, the probe ledger, the witness
// plan per epoch, the report schedule and contents, the verdict Evaluator
// and the daily volume account. The daemon (node/) drives it with real
// sockets, clocks and LMDB; meshsim (tools/meshsim) drives the very same
// code on a virtual network. Events in, effects out (node/agent/effects.h):
// it never reads a clock, opens a socket, spawns a thread or draws
// randomness other than from the seed it is given; `now` is the node's wall
// clock (ms since the Unix epoch) at the event.
//
// Thread safety: none. One strand (or one thread) owns an agent.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "common/bytes.h"
#include "common/result.h"
#include "gossip/core.h"
#include "node/agent/clock_watch.h"
#include "node/agent/config.h"
#include "node/agent/effects.h"
#include "node/agent/plans.h"
#include "node/agent/store.h"
#include "node/agent/volume.h"
#include "verdict/evaluation.h"
#include "verdict/probe_ledger.h"

namespace mesh::agent {

enum class AgentError {
  corrupt_state,  // a stored agent state value does not decode; the message names its key
};
const char* to_string(AgentError error);

// Pure work an agent may share with others (a simulator's nodes); null
// members mean the agent's own (what the daemon uses). Non-null ones must
// outlive the agent.
struct AgentShared {
  gossip::SharedWork work;
  PlanSource* plans = nullptr;
};

#define MESH_AGENT_COUNTERS(X)                                                            \
  X(probes_requested)       /* probes handed to the shell */                              \
  X(probes_ok)              /* outcomes: every stage asked for succeeded */               \
  X(probes_failed)          /* outcomes: a failure reason (by reason: ledger streaks) */ \
  X(probes_lost)            /* requested, no outcome within probe_lost_after_ms */        \
  X(probes_unexpected)      /* outcomes of no probe in flight (late, or unknown id) */    \
  X(self_checks_requested)                                                                \
  X(reports_published)      /* own reports signed and accepted by the core */            \
  X(reports_refused)        /* own reports the core refused (a bug or a clock fault) */   \
  X(refutations)            /* reports published to answer a witness that had not heard from us */ \
  X(confirmations)          /* probes brought forward to confirm a failure (confirmation.h) */ \
  X(confirm_rounds_refused) /* first failures confirmed at the interval: the target's rounds were spent */ \
  X(triggered_probes)       /* probes brought forward by another witness's fresh failure */ \
  X(triggers_refused)       /* such failures heard past the target's rate limit */ \
  X(verdict_evaluations)                                                                  \
  X(verdict_snapshots)      /* evaluations that changed what an operator sees */

struct AgentCounters {
#define MESH_AGENT_COUNTER_FIELD(name) std::uint64_t name = 0;
  MESH_AGENT_COUNTERS(MESH_AGENT_COUNTER_FIELD)
#undef MESH_AGENT_COUNTER_FIELD
  template <class Fn>
  void for_each(Fn&& fn) const {
#define MESH_AGENT_COUNTER_VISIT(name) fn(#name, name);
    MESH_AGENT_COUNTERS(MESH_AGENT_COUNTER_VISIT)
#undef MESH_AGENT_COUNTER_VISIT
  }
};

class Agent {
 public:
  // `seed` drives every random choice (gossip peer sampling, report and
  // probe phases and jitter).
  Agent(AgentConfig config, std::uint64_t seed, AgentShared shared = {});
  ~Agent();
  Agent(const Agent&) = delete;
  Agent& operator=(const Agent&) = delete;

  // Once, first: what the node's store holds (AgentStore::load). Records go
  // through the gossip core's full acceptance path (refused ones come back
  // as erases); probe streaks and today's volume account resume.
  // Error: a stored state value of the agent's that does not decode (the
  // message names the key); nothing is changed then.
  Result<AgentEffects, AgentError> start(const StoredState& stored, UnixMs now);

  // A record made outside the mesh and handed in locally: the operator's
  // signed roster (the roster file, the API). Same acceptance path as a
  // record from the network; on success it is stored and spread. The error
  // names why it was refused.
  Result<AgentEffects, RecordError> offer_record(ByteView raw, UnixMs now);

  // A frame from a peer, as received. Bad frames are dropped and counted by
  // the core, never stored.
  AgentEffects on_frame(ByteView frame, UnixMs now);

  // Every config.core.tick_interval_ms: gossip timers and frames, the
  // report schedule (self-check requests), due probes, verdict refresh.
  AgentEffects on_tick(UnixMs now);

  // The transport could not reach `peer` (a connection timed out, or frames
  // went unacknowledged): its gossip link is dead from the next tick
  // (gossip::GossipCore::on_link_failed).
  void on_link_failed(std::string_view peer, UnixMs now);

  // The transport has a working path to `peer` again
  // (gossip::GossipCore::on_link_up).
  void on_link_up(std::string_view peer, UnixMs now);

  // What a requested probe found (the shell answers every request once).
  AgentEffects on_probe_outcome(const ProbeOutcome& outcome, UnixMs now);

  // A self-check's result. When one was requested, the node's report is
  // built from it, signed, stored and spread.
  AgentEffects on_self_check(const SelfCheckOutcome& outcome, UnixMs now);

  // The wall clock jumped by `delta_ms` (the shell compares it with its
  // monotonic clock): probe times move with it (ProbeLedger::shift), and so
  // do the agent's own timers (reports, probes), so that a step back does
  // not silence the node for as long as the step.
  void on_clock_jump(DurationMs delta_ms);

  // Everything not yet stored (probe streaks, the exact volume account):
  // for a clean shutdown.
  AgentEffects flush(UnixMs now);

  // The verdicts at `now` of the reports held.
  // REQUIRES: a roster is held and config.core.hold_decoded_reports.
  verdict::Evaluation evaluate(UnixMs now);

  // The roster indices this node probes at `now` (empty: no roster, or not
  // a member).
  std::vector<std::uint32_t> probe_targets(UnixMs now);

  const gossip::GossipCore& core() const;
  const Roster* roster() const;
  const verdict::ProbeLedger& ledger() const;
  VolumeStatus volume() const;
  const AgentCounters& counters() const;
  // Whether this node's clock seems to disagree with the fleet's, at `now`
  // (node/agent/clock_watch.h).
  ClockState clock(UnixMs now) const;
  // Whether this node is still warming up at `now` (node/agent/warm_up.h):
  // started lately, it may not hold every member's latest report yet, and
  // its reports say so (Report::warming).
  bool warming(UnixMs now) const;
  // Whether this node delivers the fleet's alerts now (the shell decides:
  // node/rotation/sync_owner.h). Its reports say so (Report::alert_sender),
  // and a change is news: the next report goes out at once (within the
  // change gap), so that the others drop only what a sender has claimed.
  void set_alert_sender(bool sender);
  // The latest verdict snapshot (as last returned in AgentEffects::verdicts),
  // or null before the first evaluation.
  std::shared_ptr<const verdict::Evaluation> verdicts() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mesh::agent
