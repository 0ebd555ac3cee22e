// The API's routing (docs/API.md): a pure function from a request and an
// immutable snapshot to what to answer. No I/O, no lock, no clock: the
// server (node/api/server.h) carries requests in and responses out, holds
// a long-poll until the snapshot's index moves, and hands a roster to the
// daemon when the router says so.
#pragma once

#include <cstdint>
#include <string>

#include "common/time.h"
#include "node/api/http_types.h"
#include "node/api/server_stats.h"
#include "node/api/snapshot.h"
#include "node/api/tokens.h"

namespace mesh::api {

inline constexpr DurationMs kWaitMaxMs = 5 * 60'000;  // a long-poll's longest wait

struct RouteDecision {
  enum class Kind {
    respond,       // send `response`
    wait,          // hold until the snapshot's index != `index`, at most `wait_ms`; then route again
    offer_roster,  // hand `roster` to the node (admin, authorized); its answer is the response
  };
  Kind kind = Kind::respond;
  ApiResponse response;
  std::uint64_t index = 0;
  DurationMs wait_ms = 0;
  std::string roster;
};

// `held`: the request was already held once (its wait ended or the index
// moved): answer now, whatever the index. `server`: the API server's own
// counters, for GET /metrics.
RouteDecision route(const ApiRequest& request, const ApiSnapshot& snapshot, const TokenSet& tokens,
                    bool held = false, const ApiServerStats& server = {});

// A JSON error response: {"error": code, "message": message}.
ApiResponse error_response(unsigned status, std::string_view code, std::string_view message);

// The response to PUT /v1/roster once the node has tried the record:
// accepted (version, servers), or refused with `not_newer` (409) or any
// other reason (400, `invalid_roster`).
ApiResponse roster_accepted(std::uint64_t version, std::size_t servers);
ApiResponse roster_refused(bool not_newer, std::string_view message);

}  // namespace mesh::api
