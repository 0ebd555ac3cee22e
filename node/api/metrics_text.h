// GET /metrics: the snapshot in Prometheus' text format 0.0.4, by the book
// (docs/API.md, "GET /metrics"): names prefixed meshnode_, base units,
// counters ending in _total, meshnode_build_info, labels bounded by the
// fleet size.
#pragma once

#include <string>

#include "node/api/server_stats.h"
#include "node/api/snapshot.h"

namespace mesh::api {

// `server`: the API server's own counters (meshnode_api_*).
std::string render_metrics(const ApiSnapshot& snapshot, const ApiServerStats& server = {});

}  // namespace mesh::api
