// Which probes are TLS handshakes (docs/PROTOCOL.md, "Probes"). A TLS
// handshake costs about 7x a bare TCP connect, and an SNI block is a
// country's doing, so a country's witnesses of a target take turns: between
// them they make one TLS probe of it every `tls_every` probe intervals, on a
// grid of the clock (the same on every node while clocks agree), each in its
// own slot by its rank among them. A
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

// The start of self's latest turn for `target` at or before `now`: the grid
// has slots of `slot_ms` (tls_every probe intervals), shifted per target so
// that a node's targets do not all turn at the same moment; slot n of
// target t belongs to rank (n + t) mod turns, so that a node's turns for its
// targets fall in every slot. REQUIRES: slot_ms > 0.
UnixMs latest_turn_ms(TlsTurn turn, std::uint32_t target, UnixMs now, DurationMs slot_ms);

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
