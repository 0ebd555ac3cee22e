// The JSON bodies of docs/API.md, from a snapshot. Field names are the
// contract; ages count from the snapshot's time.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <memory>
#include <string>

#include "node/api/snapshot.h"

namespace mesh::api {

// GET /v1/routes (rendered once per snapshot; cached in it).
std::shared_ptr<const SharedBody> routes_body(const ApiSnapshot& snapshot);
// GET /v1/servers without filters (cached likewise).
std::shared_ptr<const SharedBody> servers_body(const ApiSnapshot& snapshot);

nlohmann::json route_json(const ApiSnapshot& snapshot, std::size_t route_index);
// GET /v1/routes?country=C: every route's rotation for users in C
// (node/rotation/country_routes.h), each object with "country" added.
// REQUIRES: the snapshot holds a roster and its evaluation.
nlohmann::json country_routes_json(const ApiSnapshot& snapshot, std::string_view country);
nlohmann::json server_json(const ApiSnapshot& snapshot, const ServerState& server);
// The server object plus metrics, self_check and observers.
nlohmann::json server_detail_json(const ApiSnapshot& snapshot, const ServerState& server);
nlohmann::json mesh_json(const ApiSnapshot& snapshot);
// GET /v1/mesh/records: every record held, sorted by kind and origin.
nlohmann::json held_records_json(const ApiSnapshot& snapshot);

}  // namespace mesh::api
