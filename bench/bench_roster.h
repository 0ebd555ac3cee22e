// The roster the record benchmarks decode against: `servers` members named
// s-0, s-1, ... in one country (their keys are not read by the decoders).
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "record/roster.h"

namespace mesh::bench {

inline Roster bench_roster(std::uint32_t servers, std::uint64_t version) {
  Roster roster;
  roster.version = version;
  for (std::uint32_t i = 0; i < servers; ++i) {
    ServerEntry server;
    server.id = "s-" + std::to_string(i);
    server.country = "DE";
    roster.servers.push_back(std::move(server));
  }
  return roster;
}

}  // namespace mesh::bench
