// Which probes are TLS handshakes (docs/PROTOCOL.md, "Probes"). A TLS
// handshake costs more than a bare TCP connect, and an SNI block is a
// country's doing, so a country's witnesses of a target take turns: between
// them they make one TLS probe of it every `tls_every` probe intervals, on
// their probe slots (the same on every node while clocks agree). A
// compatriot's TLS failure (in its report) makes one's next probe TLS at
// once, so that every witness of the country, not only the one whose turn
// it was, builds its streak; a failed TLS stage keeps the probes TLS until
// one gets through; the first success after a failure is checked with TLS.
// Pure: the plan, the roster and the time are arguments.
#pragma once

#include <cstdint>

#include "common/time.h"
#include "record/report.h"
#include "record/roster.h"
#include "verdict/probe_ledger.h"
#include "verdict/witnesses.h"

namespace mesh::agent {

// This node's place among the witnesses of one target that share its
// country: `rank` of `turns` (sorted by roster index).
struct TlsTurn {
  std::uint32_t rank = 0;
  std::uint32_t turns = 1;
  bool operator==(const TlsTurn&) const = default;
};

// `self`'s turn for `target` in `plan` (the full mesh counts every server of
// self's country but the target). REQUIRES: self is a witness of target.
TlsTurn tls_turn_of(const verdict::WitnessPlan& plan, const Roster& roster, std::uint32_t self,
                    std::uint32_t target);

// Where self's TLS turns for one target fall. A country's witnesses of a
// target probe it in turn, `turns` of them evenly spread over the interval
// (node/agent/probe_schedule.h): their slots make one sequence, j = m x
// turns + rank for self's m-th slot. Of it the slots j with
// ((j + h) mod P) mod s == 0 are TLS turns, where s = tls_every x turns
// and P = kTurnRun x s - 1, h a per-target shift: one TLS probe of the
// target per tls_every intervals from the country, never more than that
// apart (s slots), and since P = -1 mod turns, the turns go round the
// witnesses, kTurnRun of them in a row each (so a witness that is down
// leaves a gap of about kTurnRun + 1 turns, not every other one).
inline constexpr std::uint32_t kTurnRun = 4;
struct TurnGrid {
  TlsTurn turn;
  std::uint32_t target = 0;       // roster index: spreads a node's targets' turns
  std::uint32_t base_phase = 0;   // the target's phase before rank and country (probe_base_phase)
  std::uint32_t phase = 0;        // self's slots' phase (probe_phase)
  DurationMs interval_ms = 0;     // the probe interval of self's slots
  std::uint32_t tls_every = 1;
};

// The start of self's latest TLS turn for the target at or before `now`:
// the time of self's slot that is it. The same on every witness of a
// country while their clocks and intervals agree.
// REQUIRES: interval_ms > 0, tls_every > 0.
UnixMs latest_turn_ms(const TurnGrid& grid, UnixMs now);

// True for the failure reasons of the TLS stage (the TCP connect passed).
bool is_tls_stage(ProbeFailure failure);

// What the next probe of a target must be, given its streak (null: never
// probed), when self last asked for a TLS probe of it (min: never), when
// the target became self's, the probe time of the newest fresh TLS failure
// a compatriot reported for it (min: none), and self's latest turn.
struct TlsInputs {
  const verdict::TargetStreak* streak = nullptr;
  UnixMs last_tls_ms = 0;
  UnixMs added_ms = 0;
  UnixMs hint_ms = 0;
  UnixMs turn_ms = 0;
};
bool wants_tls(const TlsInputs& in);

}  // namespace mesh::agent
