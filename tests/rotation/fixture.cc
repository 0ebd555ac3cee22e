#include "tests/rotation/fixture.h"

#include <algorithm>
#include <stdexcept>

namespace mesh::test {

Roster table_roster(const std::vector<TableServer>& servers, std::uint64_t version) {
  Roster roster;
  roster.version = version;
  for (const TableServer& s : servers) {
    for (const std::string& route : s.routes) {
      const bool known = std::any_of(roster.routes.begin(), roster.routes.end(),
                                     [&](const Route& r) { return r.id == route; });
      if (!known) roster.routes.push_back(Route{route, route});
    }
    ServerEntry entry;
    entry.id = s.id;
    entry.country = s.country;
    entry.probe = Endpoint{s.id + ".example.net", 443};
    entry.sni = "www.example.com";
    entry.gossip = Endpoint{s.id + ".example.net", 4716};
    entry.routes = s.routes;
    roster.servers.push_back(entry);
  }
  return roster;
}

verdict::Evaluation table_evaluation(const Roster& roster, UnixMs now_ms) {
  verdict::Evaluation evaluation;
  evaluation.roster_version = roster.version;
  evaluation.now_ms = now_ms;
  for (const ServerEntry& entry : roster.servers) {
    verdict::ServerVerdict v;
    v.id = entry.id;
    v.last_report_ms = now_ms - 1'000;
    evaluation.servers.push_back(v);
  }
  recompute_routes(roster, evaluation);
  return evaluation;
}

verdict::ServerVerdict& server(verdict::Evaluation& evaluation, const std::string& id) {
  for (auto& v : evaluation.servers) {
    if (v.id == id) return v;
  }
  throw std::runtime_error("no server " + id);
}

void set_row(verdict::Evaluation& evaluation, const std::string& id, const std::string& country,
             std::uint32_t failing, std::uint32_t eligible) {
  verdict::ServerVerdict& v = server(evaluation, id);
  auto it = std::find_if(v.by_country.begin(), v.by_country.end(),
                         [&](const verdict::CountryTally& row) { return row.country == country; });
  if (it == v.by_country.end()) {
    v.by_country.push_back(verdict::CountryTally{country, 0, 0, 0});
    it = v.by_country.end() - 1;
  }
  it->failing = failing;
  it->eligible = eligible;
  std::sort(v.by_country.begin(), v.by_country.end(),
            [](const auto& a, const auto& b) { return a.country < b.country; });
  v.failing = v.eligible = 0;
  for (const auto& row : v.by_country) {
    v.failing += row.failing;
    v.eligible += row.eligible;
  }
}

void set_status(verdict::Evaluation& evaluation, const std::string& id, verdict::ServerStatus status) {
  verdict::ServerVerdict& v = server(evaluation, id);
  v.status = status;
  v.flags = {};
  v.flags.unavailable = status == verdict::ServerStatus::unavailable;
  v.flags.unreachable = status == verdict::ServerStatus::unreachable;
  v.flags.no_data = status == verdict::ServerStatus::no_data;
  v.caption = status == verdict::ServerStatus::unreachable ? verdict::unreachable_caption(v.failing, v.eligible)
              : status == verdict::ServerStatus::unavailable ? std::string(verdict::kCaptionUnavailable)
              : status == verdict::ServerStatus::no_data   ? std::string(verdict::kCaptionNoData)
                                                           : std::string();
}

void recompute_routes(const Roster& roster, verdict::Evaluation& evaluation) {
  evaluation.routes.clear();
  for (const Route& route : roster.routes) {
    verdict::RouteMembership m{route.id, {}, false, {}};
    std::vector<std::size_t> of_route;
    for (std::size_t s = 0; s < roster.servers.size(); ++s) {
      const auto& routes = roster.servers[s].routes;
      if (std::find(routes.begin(), routes.end(), route.id) == routes.end()) continue;
      of_route.push_back(s);
      const auto status = evaluation.servers[s].status;
      if (status == verdict::ServerStatus::ok || status == verdict::ServerStatus::no_data) {
        m.members.push_back(roster.servers[s].id);
      }
    }
    if (m.members.empty() && !of_route.empty()) {
      m.degraded = true;
      m.degraded_reason = "no server in rotation";
      // The tables only need a stand-in: every server that passed its self-check.
      for (std::size_t s : of_route) {
        if (!evaluation.servers[s].flags.unavailable) m.members.push_back(roster.servers[s].id);
      }
      if (m.members.empty()) m.members.push_back(roster.servers[of_route.front()].id);
    }
    evaluation.routes.push_back(m);
  }
}

}  // namespace mesh::test
