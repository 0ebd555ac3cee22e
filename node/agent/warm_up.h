// How long a node warms up after it starts (docs/PANELS.md, "One writer";
// docs/PROTOCOL.md, "Report payload", flags). A node that starts, or
// restarts after a while away, judges from the reports it holds: those it
// read from its data dir may be old, and it has heard nothing newer yet.
// It is warm once it has received, since its start, a report from every
// other member (a member that reports has published since, or will within
// a heartbeat interval; one whose stored report is stale too: a node away
// longer than stale_after_ms sees every member no_data, all in rotation),
// and at the latest one heartbeat interval and a margin after its start
// (a member that is down holds it to that cap): every live
// member publishes at least once per interval (at a grid point up to the
// interval plus its phase away), and gossip carries that report to every
// node within seconds. Every start warms up: a first start, or one after
// longer than the store keeps reports, holds nothing, sees every member
// no_data (all in rotation) and would enable the hosts the fleet holds
// out just as well. A fleet started at once is warm within seconds of its
// last node's first report (each node has then heard every other); a
// restarted node within a heartbeat interval.
// Until then its reports say it is warming, and no node names it the
// panel's writer or the alerts' sender while another can be: a restarted
// sender once took its role back within a second and re-enabled the host
// of a server the fleet held out, from a report it had not caught up with
// yet (tests/panels/alert_soak, 2026-12-05).
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
