// Fleet: lookup tables derived once from a roster (countries, id -> index,
// route members), so that the verdict engine never scans the roster per
// query. Pure and deterministic: the same roster gives the same tables.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "record/roster.h"

namespace mesh::verdict {

struct Fleet {
  std::uint64_t roster_version = 0;
  std::uint32_t server_count = 0;
  std::vector<std::string> countries;            // distinct, sorted bytewise
  std::vector<std::uint32_t> country_of;         // per server: index into countries
  std::vector<std::vector<std::uint32_t>> members_of_country;  // roster order
  // [(servers + 1) x countries]: at row s, per country, its servers with an
  // index below s (how many servers of a country a span of indices holds).
  std::vector<std::uint32_t> country_below;
  std::vector<std::uint64_t> id_hash;            // per server: fnv1a64(id)
  std::vector<std::pair<ServerId, std::uint32_t>> id_index;    // sorted by id
  std::vector<std::vector<std::uint32_t>> route_members;       // per roster route, roster order
};

// Builds the tables of `roster`.
// REQUIRES: roster.servers.size() <= kRosterServersMax (a validated roster).
// A server naming a route the roster does not define is left out of that
// route (validation refuses such rosters; the engine stays total anyway).
Fleet build_fleet(const Roster& roster);

// Index of server `id`, or nullopt. O(log servers). With duplicate ids (a
// roster validation refuses), the lowest index wins.
std::optional<std::uint32_t> find_server(const Fleet& fleet, std::string_view id);

}  // namespace mesh::verdict
