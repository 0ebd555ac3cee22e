// Heartbeats and epochs that scale with the fleet (docs/CONFIG.md, "Fleet
// size"): every node receives every node's heartbeats, and every node's
// report at each witness epoch switch, so at fixed intervals a node's
// gossip grows with the roster's size N. Above kFleetScaleServers servers
// the heartbeat interval, stale_after and the epoch grow in proportion to
// N (as Consul scales its anti-entropy interval), which keeps the reports
// a node receives per day flat in N. Only silence (`no_data`) is found
// later: power-off and blocks are found by probes, whose pace does not
// change.
//
// The roster's parameters stay the operator's; these pure functions of them
// and N are what the agent, the verdict engine, the daemon and meshsim use,
// so every node computes the same. Header-only: verdict/ uses only the
// struct headers of record/ and links none of its code.
#pragma once

#include <algorithm>
#include <cstddef>
#include <limits>

#include "common/time.h"
#include "record/roster.h"

namespace mesh {

// The largest fleet whose nodes use the roster's intervals as they are.
inline constexpr std::size_t kFleetScaleServers = 128;

namespace fleet_scale_detail {
inline constexpr DurationMs kDayMs = 86'400'000;
// The parameters' own maxima (record/parameters.cc): a scaled value stays
// within what an operator could have written.
inline constexpr DurationMs kHeartbeatMaxMs = kDayMs;
inline constexpr DurationMs kStaleAfterMaxMs = 7 * kDayMs;
}  // namespace fleet_scale_detail

// value * max(N, 128) / 128, rounded down; saturates instead of overflowing
// (128-bit: a week in ms times 4096 servers fits in 64 bits, but a hostile
// or future value need not). A value <= 0 is returned as it is.
inline DurationMs scale_for_fleet(DurationMs value_ms, std::size_t server_count) {
  if (server_count <= kFleetScaleServers || value_ms <= 0) return value_ms;
  const __int128 scaled = static_cast<__int128>(value_ms) * static_cast<__int128>(server_count) /
                          static_cast<__int128>(kFleetScaleServers);
  const __int128 cap = static_cast<__int128>(std::numeric_limits<DurationMs>::max());
  return static_cast<DurationMs>(std::min(scaled, cap));
}

// The interval between a node's heartbeats in a fleet of `server_count`:
// heartbeat_interval_ms scaled, at most one day (never below the roster's).
inline DurationMs effective_heartbeat_ms(const Parameters& params, std::size_t server_count) {
  const DurationMs scaled = scale_for_fleet(params.heartbeat_interval_ms, server_count);
  return std::max(params.heartbeat_interval_ms, std::min(scaled, fleet_scale_detail::kHeartbeatMaxMs));
}

// How long a report stays fresh in a fleet of `server_count`:
// stale_after_ms scaled by the same factor (so it keeps its ratio to the
// heartbeat), at most 7 days (never below the roster's), and never below
// the effective heartbeat.
inline DurationMs effective_stale_after_ms(const Parameters& params, std::size_t server_count) {
  const DurationMs scaled = scale_for_fleet(params.stale_after_ms, server_count);
  const DurationMs capped =
      std::max(params.stale_after_ms, std::min(scaled, fleet_scale_detail::kStaleAfterMaxMs));
  return std::max(capped, effective_heartbeat_ms(params, server_count));
}

// The length of a witness epoch in a fleet of `server_count`: epoch_ms
// scaled by the same factor, at most one day (never below the roster's).
// Every node publishes a full report at each switch (its witness plan, and
// so its report's meaning, changes) and probes its next targets beside its
// current ones for the warm-up before it, so at a fixed epoch a node's
// gossip grows with N again: at 1000 servers the hourly switches were 24
// of a node's 74 reports a day and 13 of its 73 MB a day on the wire
// (docs/PERFORMANCE.md, "Bytes per node at 100, 1000 and 3000 servers").
// Scaled, the pairs are still drawn afresh at least once a day.
inline DurationMs effective_epoch_ms(const Parameters& params, std::size_t server_count) {
  const DurationMs scaled = scale_for_fleet(params.epoch_ms, server_count);
  return std::max(params.epoch_ms, std::min(scaled, fleet_scale_detail::kDayMs));
}

}  // namespace mesh
