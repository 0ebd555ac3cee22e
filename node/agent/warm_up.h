// How long a node warms up after it starts (docs/PROTOCOL.md, "Report
// payload", flags; docs/PANELS.md, "One writer for the fleet"). A node that
// has just started judges from the reports it holds: those read from its
// data dir may be old, and after a first start, or a start after longer
// than its store keeps reports, it holds none and sees every member
// no_data (all in rotation). It is warm once it has received, since its
// start, a fresh report from every other member (at most stale_after old
// as it arrives: a report that arrives stale shows its member no_data, and
// the next one is more catching up), and at the latest one heartbeat
// interval and a margin after its start (a member that is down holds it to
// that cap): every live member publishes at least once per interval, at a
// grid point up to the interval plus its phase away, and gossip carries it
// to every node within seconds. A fleet started at once is warm within
// seconds of its last node's first report; a restarted node within a
// heartbeat interval. Until then its reports say it is warming, and no
// node names it the panel's writer or the alerts' sender while another can
// be: a restarted sender once took its role back within a second and
// re-enabled the host of a server the fleet held out, from a report it had
// not caught up with yet (tests/panels/alert_soak, 2026-12-05).
#pragma once

#include <algorithm>
#include <cstddef>

#include "common/time.h"
#include "record/fleet_scale.h"
#include "record/roster.h"

namespace mesh::agent {

// The heartbeat grid's per-node phase (at most 10 s) and a few gossip rounds.
// warm_up_ms: the longest a node warms up.
inline constexpr DurationMs kWarmUpMarginMs = 20'000;

inline DurationMs warm_up_ms(const Parameters& params, std::size_t server_count) {
  return std::min(effective_heartbeat_ms(params, server_count) + kWarmUpMarginMs,
                  effective_stale_after_ms(params, server_count));
}

}  // namespace mesh::agent
