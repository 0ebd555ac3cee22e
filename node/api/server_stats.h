// The API server's own counters (node/api/server.h), also shown by GET
// /metrics (docs/API.md): plain values, read from the server at a request.
#pragma once

#include <cstdint>

namespace mesh::api {

struct ApiServerStats {
  std::uint64_t connections_accepted = 0;
  std::uint64_t connections_refused = 0;          // full, and no untrusted connection gave way
  std::uint64_t connections_refused_address = 0;  // the address held kConnectionsPerAddressMax
  std::uint64_t connections_evicted = 0;          // closed to make room (docs/API.md, "Under a connection flood")
  std::uint64_t accept_errors = 0;                // accept(2) failed for want of resources (EMFILE, ...)
  std::uint64_t requests = 0;
  std::uint64_t requests_rejected = 0;            // over a limit, malformed, or timed out
  std::uint64_t connections_open = 0;
  std::uint64_t connections_trusted = 0;          // open ones that presented a valid token

  // Connections the server let go of to stay available.
  std::uint64_t shed() const { return connections_refused + connections_refused_address + connections_evicted; }
};

}  // namespace mesh::api
