// Small pieces the scenarios share: nft address sets, reading a server's
// state from an API answer, waiting for the healthy fleet. Header-only.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "tests/e2e/suite.h"

namespace mesh::test::e2e {

// `{ 10.77.0.1, 10.77.0.4 }` for nft.
inline std::string address_set(const std::vector<std::uint32_t>& nodes) {
  std::string out = "{ ";
  for (std::size_t k = 0; k < nodes.size(); ++k) out += (k ? ", " : "") + Fleet::address(nodes[k]);
  return out + " }";
}

inline std::string status_of(const ServerMap& servers, const ServerId& id) {
  auto it = servers.find(id);
  return it == servers.end() ? "" : it->second.at("status").get<std::string>();
}

inline bool every_member_ok(const Fleet& fleet, const ServerMap& servers) {
  for (std::uint32_t i : fleet.members()) {
    if (status_of(servers, fleet.id(i)) != "ok") return false;
  }
  return servers.size() == fleet.members().size();
}

// The nodes of `country` among the members.
inline std::vector<std::uint32_t> of_country(const Fleet& fleet, const std::string& country) {
  std::vector<std::uint32_t> out;
  for (std::uint32_t i : fleet.members()) {
    if (fleet.country(i) == country) out.push_back(i);
  }
  return out;
}

// A route's entry in GET /v1/routes at node i (null when missing).
inline Json route_at(const Fleet& fleet, std::uint32_t node, const std::string& route) {
  auto routes = fleet.get(node, "/v1/routes");
  if (!routes) return nullptr;
  for (const auto& r : *routes) {
    if (r.at("id") == route) return r;
  }
  return nullptr;
}

inline bool in_route(const Json& route, const ServerId& id) {
  if (route.is_null()) return false;
  const auto& servers = route.at("servers");
  return std::find(servers.begin(), servers.end(), id) != servers.end();
}

// Every running member shows every member ok (at most `limit`); scenarios
// start from here. Statuses on the way are not judged.
inline bool settle(Fleet& fleet, Clock::duration limit) {
  Watch watch(fleet, fleet.running());
  watch.allow_everywhere({"unavailable", "unreachable", "no_data"});
  return watch.until([&](std::uint32_t, const ServerMap& servers) { return every_member_ok(fleet, servers); },
                     limit);
}

// A duration in seconds from the environment, or `fallback`.
inline int env_seconds(const char* name, int fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && std::atoi(value) > 0 ? std::atoi(value) : fallback;
}

inline std::string fixed1(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", s);
  return text;
}

}  // namespace mesh::test::e2e
