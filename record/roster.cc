// Roster lookups and validate_roster: every rule of docs/CONFIG.md.
#include "record/roster.h"

#include <algorithm>
#include <set>

#include "record/address.h"
#include "record/country.h"
#include "record/parameters.h"

namespace mesh {
namespace {

using Check = Status<RosterError>;

Error<RosterError> server_error(RosterError code, const ServerEntry& server,
                                const std::string& what) {
  return make_error(code, "server '" + server.id + "': " + what);
}

Check check_routes(const Roster& roster) {
  if (roster.routes.size() > kRosterRoutesMax) {
    return make_error(RosterError::too_large, std::to_string(roster.routes.size()) +
                                                  " routes, over the limit of " +
                                                  std::to_string(kRosterRoutesMax));
  }
  std::set<std::string_view> ids;
  for (const Route& route : roster.routes) {
    if (!is_valid_server_id(route.id)) {
      return make_error(RosterError::bad_id, "route '" + route.id +
                                                 "': id must be 1..64 bytes of [a-z0-9._-] "
                                                 "starting with a letter or digit");
    }
    if (!ids.insert(route.id).second) {
      return make_error(RosterError::duplicate_route, "route '" + route.id + "': defined twice");
    }
    if (route.name.size() > kRouteNameBytesMax) {
      return make_error(RosterError::too_large,
                        "route '" + route.id + "': name longer than 128 bytes");
    }
    if (route.name.empty() || !is_printable_utf8(route.name)) {
      return make_error(RosterError::bad_id, "route '" + route.id +
                                                 "': name must be non-empty UTF-8 text "
                                                 "without control characters");
    }
  }
  return Ok{};
}

Check check_endpoint(const ServerEntry& server, const Endpoint& endpoint, const char* field) {
  if (!is_valid_host(endpoint.host)) {
    return server_error(RosterError::bad_address, server,
                        std::string(field) + " host '" + endpoint.host +
                            "' is not a DNS name or IP literal of 1..253 bytes");
  }
  if (endpoint.port == 0) {
    return server_error(RosterError::bad_address, server, std::string(field) + " port is 0");
  }
  return Ok{};
}

Check check_server_routes(const ServerEntry& server, const std::set<std::string_view>& known) {
  if (server.routes.size() > kRoutesPerServerMax) {
    return server_error(RosterError::too_large, server,
                        std::to_string(server.routes.size()) + " routes, over the limit of " +
                            std::to_string(kRoutesPerServerMax));
  }
  std::set<std::string_view> seen;
  for (const std::string& route : server.routes) {
    if (known.count(route) == 0) {
      return server_error(RosterError::unknown_route, server,
                          "route '" + route + "' is not defined in the roster");
    }
    if (!seen.insert(route).second) {
      return server_error(RosterError::duplicate_route, server,
                          "route '" + route + "' listed twice");
    }
  }
  return Ok{};
}

// Checks one server on its own (not against the others).
Check check_server(const ServerEntry& server, const std::set<std::string_view>& routes) {
  if (!is_valid_server_id(server.id) || server.id == kOperatorOrigin) {
    return server_error(RosterError::bad_id, server,
                        "id must be 1..64 bytes of [a-z0-9._-] starting with a letter or "
                        "digit, and not 'operator'");
  }
  if (!is_iso3166_alpha2(server.country)) {
    return server_error(RosterError::bad_country, server,
                        "country '" + server.country + "' is not an ISO 3166-1 alpha-2 code");
  }
  if (auto status = check_endpoint(server, server.probe, "probe"); !status) return status;
  if (!is_dns_name(server.sni)) {
    return server_error(RosterError::bad_sni, server,
                        "sni '" + server.sni + "' is not a DNS name");
  }
  if (auto status = check_endpoint(server, server.gossip, "gossip"); !status) return status;
  if (std::all_of(server.key.begin(), server.key.end(), [](std::uint8_t b) { return b == 0; })) {
    return server_error(RosterError::missing_key, server, "key is missing (all zero)");
  }
  return check_server_routes(server, routes);
}

}  // namespace

const char* to_string(RosterError error) {
  switch (error) {
    case RosterError::malformed: return "malformed";
    case RosterError::duplicate_server: return "duplicate_server";
    case RosterError::duplicate_route: return "duplicate_route";
    case RosterError::duplicate_key: return "duplicate_key";
    case RosterError::bad_id: return "bad_id";
    case RosterError::bad_country: return "bad_country";
    case RosterError::bad_address: return "bad_address";
    case RosterError::bad_sni: return "bad_sni";
    case RosterError::unknown_route: return "unknown_route";
    case RosterError::missing_key: return "missing_key";
    case RosterError::bad_parameter: return "bad_parameter";
    case RosterError::too_large: return "too_large";
    case RosterError::empty: return "empty";
  }
  return "unknown";
}

std::optional<std::uint32_t> Roster::index_of(std::string_view id) const {
  for (std::size_t i = 0; i < servers.size(); ++i) {
    if (servers[i].id == id) return static_cast<std::uint32_t>(i);
  }
  return std::nullopt;
}

const ServerEntry* Roster::find(std::string_view id) const {
  std::optional<std::uint32_t> index = index_of(id);
  return index ? &servers[*index] : nullptr;
}

Status<RosterError> validate_roster(const Roster& roster) {
  if (roster.servers.empty()) return make_error(RosterError::empty, "roster has no servers");
  if (roster.servers.size() > kRosterServersMax) {
    return make_error(RosterError::too_large, std::to_string(roster.servers.size()) +
                                                  " servers, over the limit of " +
                                                  std::to_string(kRosterServersMax));
  }
  if (auto status = check_routes(roster); !status) return status;
  std::set<std::string_view> route_ids;
  for (const Route& route : roster.routes) route_ids.insert(route.id);
  std::set<std::string_view> server_ids;
  std::set<PublicKey> keys;
  for (const ServerEntry& server : roster.servers) {
    if (auto status = check_server(server, route_ids); !status) return status;
    if (!server_ids.insert(server.id).second) {
      return server_error(RosterError::duplicate_server, server, "id listed twice");
    }
    if (!keys.insert(server.key).second) {
      return server_error(RosterError::duplicate_key, server,
                          "key " + public_key_to_hex(server.key) + " is already another server's");
    }
  }
  return validate_parameters(roster.params);
}

}  // namespace mesh
