#include "tools/meshsim/fleet_gen.h"

#include <algorithm>
#include <set>

#include "common/rng.h"
#include "record/country.h"
#include "record/ports.h"

namespace mesh::sim {
namespace {

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return text;
}

std::string country_route(const std::string& country) { return "route-" + lower(country); }

Error<ScenarioError> invalid(std::string message) {
  return make_error(ScenarioError::invalid, std::move(message));
}

std::vector<ServerSpec> generated_servers(const FleetSpec& fleet) {
  std::vector<ServerSpec> servers;
  for (std::uint32_t n = 0; n < fleet.generated_nodes; ++n) {
    std::string country = kGeneratedCountries[n % fleet.generated_countries];
    servers.push_back({generated_server_id(n, fleet.generated_countries), country, {}});
  }
  return servers;
}

// Fills empty route lists with the country route and "global", and collects
// every route the servers name.
void complete_routes(std::vector<SimServer>& servers, std::vector<Route>& routes) {
  std::set<std::string> known;
  for (const Route& route : routes) known.insert(route.id);
  auto add_route = [&](const std::string& id, const std::string& name) {
    if (known.insert(id).second) routes.push_back({id, name});
  };
  for (SimServer& server : servers) {
    if (server.spec.routes.empty()) {
      server.spec.routes = {country_route(server.spec.country), "global"};
    }
    for (const std::string& route : server.spec.routes) {
      bool is_country = route == country_route(server.spec.country);
      add_route(route, route == "global" ? "All servers"
                       : is_country      ? server.spec.country + " servers"
                                         : route);
    }
  }
}

Status<ScenarioError> check_selector(const World& world, const Selector& selector,
                                     const std::string& where) {
  for (const ServerId& id : selector.servers) {
    if (!world.index_of.contains(id)) return invalid(where + ": unknown server '" + id + "'");
  }
  for (const std::string& country : selector.countries) {
    if (!is_iso3166_alpha2(country)) return invalid(where + ": bad country '" + country + "'");
  }
  return Ok{};
}

Status<ScenarioError> check_references(const World& world, const Scenario& scenario) {
  for (std::size_t i = 0; i < scenario.events.size(); ++i) {
    const Event& event = scenario.events[i];
    std::string where = (event.origin.empty() ? "" : event.origin + ": ") + "event " +
                        std::to_string(i + 1) + " (" + to_string(event.kind) + ")";
    for (const Selector* selector : {&event.servers, &event.from, &event.to}) {
      if (auto status = check_selector(world, *selector, where); !status.ok()) return status;
    }
    for (const Selector& group : event.groups) {
      if (auto status = check_selector(world, group, where); !status.ok()) return status;
    }
  }
  for (const Expectation& expect : scenario.expectations) {
    if (!expect.node.empty() && !world.index_of.contains(expect.node)) {
      return invalid((expect.origin.empty() ? "" : expect.origin + ": ") + "expectation '" +
                     expect.text() + "': unknown node '" + expect.node + "'");
    }
    if (!expect.server.empty() && !world.index_of.contains(expect.server)) {
      return invalid((expect.origin.empty() ? "" : expect.origin + ": ") + "expectation '" +
                     expect.text() + "': unknown server '" + expect.server + "'");
    }
  }
  return Ok{};
}

Status<ScenarioError> add_server(World& world, SimServer server, std::uint64_t seed) {
  if (!is_valid_server_id(server.spec.id)) return invalid("bad server id '" + server.spec.id + "'");
  if (!is_iso3166_alpha2(server.spec.country)) {
    return invalid("server '" + server.spec.id + "': bad country '" + server.spec.country + "'");
  }
  auto [it, fresh] = world.index_of.emplace(server.spec.id, world.servers.size());
  if (!fresh) return invalid("server '" + server.spec.id + "' defined twice");
  server.key = derive_key(seed, "node/" + server.spec.id);
  world.servers.push_back(std::move(server));
  return Ok{};
}

}  // namespace

ServerId generated_server_id(std::uint32_t n, std::uint32_t countries) {
  return lower(kGeneratedCountries[n % countries]) + "-" + std::to_string(n / countries + 1);
}

KeyPair derive_key(std::uint64_t seed, const std::string& label) {
  std::uint64_t mixed = seed;
  for (char c : label) mixed = (mixed ^ static_cast<std::uint8_t>(c)) * 0x100000001b3ull;
  Rng rng(mixed);
  Bytes seed32;
  for (int word = 0; word < 4; ++word) {
    std::uint64_t value = rng.next();
    for (int b = 0; b < 8; ++b) seed32.push_back(static_cast<std::uint8_t>(value >> (8 * b)));
  }
  return key_pair_from_seed(seed32);
}

ScenarioResult<World> build_world(const Scenario& scenario) {
  World world;
  world.operator_key = derive_key(scenario.seed, "operator");
  world.intruder_key = derive_key(scenario.seed, "intruder");
  const FleetSpec& fleet = scenario.fleet;
  std::vector<ServerSpec> initial = fleet.servers.empty() ? generated_servers(fleet) : fleet.servers;
  if (initial.empty()) return invalid("the fleet has no servers");
  world.routes = fleet.routes;
  for (ServerSpec& spec : initial) {
    if (auto status = add_server(world, {std::move(spec), {}, true}, scenario.seed); !status.ok()) {
      return status.error();
    }
  }
  for (const Event& event : scenario.events) {
    for (const ServerSpec& spec : event.add) {
      if (auto status = add_server(world, {spec, {}, false}, scenario.seed); !status.ok()) {
        return status.error();
      }
    }
  }
  if (world.servers.size() > kNodesMax) return invalid("more than kNodesMax servers");
  complete_routes(world.servers, world.routes);
  if (auto status = check_references(world, scenario); !status.ok()) return status.error();
  std::vector<std::uint32_t> members;
  for (std::uint32_t i = 0; i < world.servers.size(); ++i) {
    if (world.servers[i].initial) members.push_back(i);
  }
  world.initial_roster = make_roster(world, members, scenario.params, 1);
  auto valid = validate_roster(world.initial_roster);
  if (!valid.ok()) return invalid("the initial roster is refused: " + valid.message());
  return world;
}

Roster make_roster(const World& world, const std::vector<std::uint32_t>& servers,
                   const Parameters& params, std::uint64_t version) {
  MESH_CHECK(!servers.empty(), "make_roster(): no servers");
  Roster roster;
  roster.version = version;
  roster.params = params;
  std::set<std::string> used;
  for (std::uint32_t i : servers) {
    const SimServer& server = world.servers[i];
    ServerEntry entry;
    entry.id = server.spec.id;
    entry.country = server.spec.country;
    entry.probe = {server.spec.id + ".sim.example", 443};
    entry.sni = entry.probe.host;
    entry.gossip = {entry.probe.host, kDefaultGossipPort};
    entry.key = server.key.public_key;
    entry.routes = server.spec.routes;
    used.insert(entry.routes.begin(), entry.routes.end());
    roster.servers.push_back(std::move(entry));
  }
  for (const Route& route : world.routes) {
    if (used.contains(route.id)) roster.routes.push_back(route);
  }
  return roster;
}

Bytes sign_roster(const World& world, const Roster& roster, UnixMs timestamp_ms) {
  return encode_signed_record(RecordKind::roster, kOperatorOrigin, roster.version, timestamp_ms,
                              encode_roster_payload(roster), world.operator_key.secret_key);
}

}  // namespace mesh::sim
