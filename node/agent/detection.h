// How fast the agent's rules can show a failure that a whole country sees
// (docs/VERDICTS.md, "Detection bound"): the time from the moment a block
// or a power-off begins to the moment every node that hears the fleet shows
// the verdict. meshsim's oracle reads it (docs/SIMULATOR.md, "Checks"): a
// server cut off from a whole country for longer than this and still shown
// in rotation is a missed verdict, and a verdict that outlives its cause by
// more than this is a false one. Pure arithmetic on the roster's parameters.
#pragma once

#include "common/time.h"
#include "record/roster.h"

namespace mesh::agent {

// Reports of changes are at least this far apart (docs/PROTOCOL.md, "When
// a node reports"): a mass block turns many targets within one probe
// interval, and a flapping target turns at every probe.
inline DurationMs change_gap_ms(const Parameters& params) { return params.probe_interval_ms / 4; }

// A probe that gets no answer reports at its deadline: the connect's (the
// daemon's [probe] connect_timeout_ms, meshsim's probe_timeout_ms: 3.5 s by
// default, node/agent/config.h), or the TLS handshake's (10 s).
inline constexpr DurationMs kProbeDeadlineAllowanceMs = 10'000;
// From a witness's report to every node: a few gossip rounds (2 log2 N
// one-second ticks is 20 s at N = 1000), with room for a check's period.
inline constexpr DurationMs kSpreadAllowanceMs = 30'000;

// The first failed probe of a target comes within one probe interval of
// the failure's start (its slot, node/agent/probe_schedule.h; a 5% margin
// for a slot moved by a probe brought forward, which confirmations follow
// at once), and fail_streak - 1 more make the streak (confirmations make
// it far sooner); then the probe's deadline, the change gap and the spread.
inline DurationMs detection_bound_ms(const Parameters& params) {
  const DurationMs streak = static_cast<DurationMs>(params.fail_streak) * params.probe_interval_ms * 21 / 20;
  return streak + kProbeDeadlineAllowanceMs + change_gap_ms(params) + kSpreadAllowanceMs;
}

}  // namespace mesh::agent
