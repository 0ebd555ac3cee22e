// The daily volume cap of the end-to-end suite's roster (tests/e2e/fleet.cc),
// derived from its intervals. The suite probes every 2 s, 30 times the
// default pace; under the default cap of 200 MiB a node paces its probes by
// the hour of the UTC day (docs/CONFIG.md, "Daily volume cap": the rest of
// the day over the rounds that still fit), so the suite's 2 s held only in
// the last hours of the day and right after midnight probes came about every
// 11 s: timings that depended on when the suite ran. This cap fits a whole
// day of the suite's pace, so no node is ever paced by it, at any hour.
// Header-only: tests/agent/volume_test.cc checks it against the pacing.
#pragma once

#include <algorithm>
#include <cstdint>

#include "node/agent/volume.h"
#include "record/roster.h"

namespace mesh::test::e2e {

// The most servers the suite's roster holds (9, and one added by scenario 11).
inline constexpr std::uint32_t kSuiteServersMax = 10;

// A day of probes at `params`' interval, each node probing every other with
// a TLS handshake at the prober's worst-case reservation (24 KiB, every
// probe TLS as the suite configures it), and as much again for gossip,
// which at 2 s heartbeats and N = 10 is a small fraction of it.
inline std::uint64_t suite_volume_cap(const Parameters& params, std::uint32_t servers_max = kSuiteServersMax) {
  const auto rounds_per_day = static_cast<std::uint64_t>(agent::kDayMs / params.probe_interval_ms) + 1;
  const std::uint64_t probes = rounds_per_day * (servers_max - 1) * agent::kProbeReserveTlsBytes;
  return std::min<std::uint64_t>(2 * probes, std::uint64_t{1} << 40);  // the parameter's range ends at 1 TiB
}

}  // namespace mesh::test::e2e
