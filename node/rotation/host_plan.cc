#include "node/rotation/host_plan.h"

#include <algorithm>
#include <set>

namespace mesh::rotation {
namespace {

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// Server indices wanted enabled (1), disabled (0), or left alone (-1).
std::vector<int> wanted(const Roster& roster, const std::vector<verdict::RouteMembership>& routes) {
  std::vector<int> out(roster.servers.size(), -1);
  for (std::uint32_t s = 0; s < roster.servers.size(); ++s) {
    if (!roster.servers[s].routes.empty()) out[s] = 0;
  }
  for (const verdict::RouteMembership& route : routes) {
    for (const ServerId& id : route.members) {
      if (auto index = roster.index_of(id)) out[*index] = 1;
    }
  }
  return out;
}

// Drops the disables that would leave one of the server's routes with no
// enabled host, given the enables kept.
void keep_last_hosts(const Roster& roster, const std::vector<PanelHost>& hosts,
                     const std::vector<std::int64_t>& bound, SyncPlan& plan) {
  std::set<std::string> enabled_after;
  for (const PanelHost& host : hosts) {
    if (host.enabled) enabled_after.insert(host.id);
  }
  for (const HostChange& change : plan.enable) enabled_after.insert(change.host_id);
  for (const HostChange& change : plan.disable) enabled_after.erase(change.host_id);
  std::set<std::string> protect;
  for (const Route& route : roster.routes) {
    bool any_after = false, any_now = false;
    std::vector<std::string> route_hosts;
    for (std::size_t h = 0; h < hosts.size(); ++h) {
      if (bound[h] < 0) continue;
      const auto& routes = roster.servers[bound[h]].routes;
      if (std::find(routes.begin(), routes.end(), route.id) == routes.end()) continue;
      route_hosts.push_back(hosts[h].id);
      any_now = any_now || hosts[h].enabled;
      any_after = any_after || enabled_after.count(hosts[h].id) > 0;
    }
    if (any_now && !any_after) protect.insert(route_hosts.begin(), route_hosts.end());
  }
  auto kept = std::stable_partition(plan.disable.begin(), plan.disable.end(),
                                    [&](const HostChange& c) { return protect.count(c.host_id) == 0; });
  plan.kept_last.assign(kept, plan.disable.end());
  plan.disable.erase(kept, plan.disable.end());
}

}  // namespace

std::vector<std::int64_t> bind_hosts(const Roster& roster, const std::vector<PanelHost>& hosts, const HostMap& map) {
  std::vector<std::int64_t> out(hosts.size(), -1);
  for (std::size_t h = 0; h < hosts.size(); ++h) {
    for (const auto& [server, keys] : map) {
      auto index = roster.index_of(server);
      if (!index) continue;
      if (std::find(keys.begin(), keys.end(), hosts[h].id) != keys.end() ||
          std::find(keys.begin(), keys.end(), hosts[h].remark) != keys.end()) {
        out[h] = *index;
      }
    }
    if (out[h] >= 0) continue;
    for (std::uint32_t s = 0; s < roster.servers.size(); ++s) {
      const Endpoint& probe = roster.servers[s].probe;
      if (lower(hosts[h].address) == lower(probe.host) && hosts[h].port == probe.port) {
        out[h] = s;
        break;
      }
    }
  }
  return out;
}

SyncPlan plan_sync(const Roster& roster, const std::vector<verdict::RouteMembership>& routes,
                   const std::vector<PanelHost>& hosts, const HostMap& map, std::uint32_t budget) {
  SyncPlan plan;
  const std::vector<std::int64_t> bound = bind_hosts(roster, hosts, map);
  const std::vector<int> want = wanted(roster, routes);
  std::vector<HostChange> enable, disable;
  for (std::size_t h = 0; h < hosts.size(); ++h) {
    if (bound[h] < 0) {
      ++plan.unknown_hosts;
      continue;
    }
    const int wanted_enabled = want[bound[h]];
    if (wanted_enabled < 0 || wanted_enabled == static_cast<int>(hosts[h].enabled)) continue;
    HostChange change{hosts[h].id, hosts[h].remark, roster.servers[bound[h]].id};
    (wanted_enabled == 1 ? enable : disable).push_back(std::move(change));
  }
  const std::size_t total = enable.size() + disable.size();
  if (enable.size() > budget) enable.resize(budget);
  const std::size_t left = budget - enable.size();
  if (disable.size() > left) disable.resize(left);
  plan.deferred = static_cast<std::uint32_t>(total - enable.size() - disable.size());
  plan.enable = std::move(enable);
  plan.disable = std::move(disable);
  keep_last_hosts(roster, hosts, bound, plan);
  return plan;
}

std::uint32_t ChangeBudget::remaining(UnixMs now) {
  while (!spent_.empty() && (now - spent_.front().first >= 60'000 || now < spent_.front().first)) {
    spent_.pop_front();
  }
  std::uint32_t used = 0;
  for (const auto& [at, changes] : spent_) used += changes;
  return used >= per_minute_ ? 0 : per_minute_ - used;
}

void ChangeBudget::spend(UnixMs now, std::uint32_t changes) {
  if (changes == 0) return;
  spent_.emplace_back(now, changes);
  while (spent_.size() > 1024) spent_.pop_front();  // bounded: at most a round a tick
}

}  // namespace mesh::rotation
