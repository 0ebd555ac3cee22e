// What the panel sync changes (docs/PANELS.md, "What meshnode changes"): the
// difference between the panel's hosts and the rotation, as a plan of bulk
// enables and disables, with the guards that make it harmless. Pure: the
// panel clients (node/panel/) read the hosts and send the plan.
//
// Level-triggered and idempotent: the plan depends only on what the panel
// holds now and the rotation now, so a retry, a second writer during a
// takeover, or a host changed by hand all converge to the same state.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "common/server_id.h"
#include "common/time.h"
#include "record/roster.h"
#include "verdict/evaluation.h"

namespace mesh::rotation {

// One host as the panel lists it, panel-neutral.
struct PanelHost {
  std::string id;       // the panel's key: Remnawave's uuid, Marzban's "inbound_tag#index"
  std::string remark;   // the name an operator sees
  std::string address;  // what users connect to
  std::uint32_t port = 0;
  bool enabled = true;
  bool operator==(const PanelHost&) const = default;
};

// server id -> the panel hosts that are that server, by id or remark
// ([panel.hosts] in the config). Hosts not named here are matched by
// address and port against the server's probe endpoint.
using HostMap = std::map<ServerId, std::vector<std::string>>;

// For each host (same order as `hosts`), the roster index of its server,
// or -1 when no server maps to it: such a host is never touched.
std::vector<std::int64_t> bind_hosts(const Roster& roster, const std::vector<PanelHost>& hosts,
                                     const HostMap& map);

struct HostChange {
  std::string host_id;
  std::string remark;
  ServerId server;
  bool operator==(const HostChange&) const = default;
};

struct SyncPlan {
  std::vector<HostChange> enable;   // enabled in the panel by this plan
  std::vector<HostChange> disable;  // disabled by this plan
  // Disables left out: they would have left a route with no enabled host.
  std::vector<HostChange> kept_last;
  std::uint32_t deferred = 0;       // changes over the per-minute cap, left for later
  std::uint32_t unknown_hosts = 0;  // hosts no roster server maps to (never touched)
  bool empty() const { return enable.empty() && disable.empty(); }
};

// The plan that brings the panel's hosts to `routes` (the rotation: a
// server is wanted enabled when it is a member of any of its routes,
// disabled when it is a member of none; a server of no route is left as it
// is), at most `budget` changes, enables first (they only add servers
// back). No route ever ends with no enabled host where it had one: the
// disables of such a route are left out.
// REQUIRES: `routes` in roster order, as many as the roster's.
SyncPlan plan_sync(const Roster& roster, const std::vector<verdict::RouteMembership>& routes,
                   const std::vector<PanelHost>& hosts, const HostMap& map, std::uint32_t budget);

// The cap on changes per minute: a sliding window of what was spent.
class ChangeBudget {
 public:
  explicit ChangeBudget(std::uint32_t per_minute) : per_minute_(per_minute) {}
  std::uint32_t remaining(UnixMs now);
  void spend(UnixMs now, std::uint32_t changes);

 private:
  std::uint32_t per_minute_;
  std::deque<std::pair<UnixMs, std::uint32_t>> spent_;  // at most one entry per sync round
};

}  // namespace mesh::rotation
