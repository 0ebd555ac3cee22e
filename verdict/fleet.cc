#include "verdict/fleet.h"

#include <algorithm>

#include "common/check.h"
#include "verdict/hash.h"

namespace mesh::verdict {
namespace {

void index_countries(const Roster& roster, Fleet& fleet) {
  for (const ServerEntry& server : roster.servers) fleet.countries.push_back(server.country);
  std::sort(fleet.countries.begin(), fleet.countries.end());
  fleet.countries.erase(std::unique(fleet.countries.begin(), fleet.countries.end()),
                        fleet.countries.end());
  fleet.members_of_country.resize(fleet.countries.size());
  for (std::uint32_t i = 0; i < fleet.server_count; ++i) {
    auto it = std::lower_bound(fleet.countries.begin(), fleet.countries.end(),
                               roster.servers[i].country);
    auto country = static_cast<std::uint32_t>(it - fleet.countries.begin());
    fleet.country_of.push_back(country);
    fleet.members_of_country[country].push_back(i);
  }
  const std::size_t countries = fleet.countries.size();
  fleet.country_below.assign((static_cast<std::size_t>(fleet.server_count) + 1) * countries, 0);
  for (std::uint32_t i = 0; i < fleet.server_count; ++i) {
    std::uint32_t* const next = &fleet.country_below[(static_cast<std::size_t>(i) + 1) * countries];
    std::copy_n(next - countries, countries, next);
    ++next[fleet.country_of[i]];
  }
}

void index_routes(const Roster& roster, Fleet& fleet) {
  std::vector<std::pair<std::string_view, std::uint32_t>> route_index;
  for (std::uint32_t r = 0; r < roster.routes.size(); ++r) {
    route_index.emplace_back(roster.routes[r].id, r);
  }
  std::sort(route_index.begin(), route_index.end());
  fleet.route_members.resize(roster.routes.size());
  for (std::uint32_t i = 0; i < fleet.server_count; ++i) {
    for (const std::string& route : roster.servers[i].routes) {
      auto it = std::lower_bound(route_index.begin(), route_index.end(),
                                 std::pair<std::string_view, std::uint32_t>(route, 0));
      if (it == route_index.end() || it->first != route) continue;
      auto& members = fleet.route_members[it->second];
      // A server listing one route twice is still one member.
      if (members.empty() || members.back() != i) members.push_back(i);
    }
  }
}

}  // namespace

Fleet build_fleet(const Roster& roster) {
  MESH_CHECK(roster.servers.size() <= kRosterServersMax, "roster over kRosterServersMax");
  Fleet fleet;
  fleet.roster_version = roster.version;
  fleet.server_count = static_cast<std::uint32_t>(roster.servers.size());
  index_countries(roster, fleet);
  for (std::uint32_t i = 0; i < fleet.server_count; ++i) {
    fleet.id_hash.push_back(fnv1a64(roster.servers[i].id));
    fleet.id_index.emplace_back(roster.servers[i].id, i);
  }
  std::sort(fleet.id_index.begin(), fleet.id_index.end());
  index_routes(roster, fleet);
  return fleet;
}

std::optional<std::uint32_t> find_server(const Fleet& fleet, std::string_view id) {
  auto it = std::lower_bound(
      fleet.id_index.begin(), fleet.id_index.end(), id,
      [](const std::pair<ServerId, std::uint32_t>& entry, std::string_view key) {
        return std::string_view(entry.first) < key;
      });
  if (it == fleet.id_index.end() || it->first != id) return std::nullopt;
  return it->second;
}

}  // namespace mesh::verdict
