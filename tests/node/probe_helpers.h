// Helpers shared by the prober tests: requests, settings, and an outcome
// collector that counts the `done` calls per probe id.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "node/prober.h"

namespace mesh::test {

// Collects outcomes and counts the calls per probe id.
struct Outcomes {
  std::vector<agent::ProbeOutcome> list;
  std::map<std::uint64_t, int> calls;

  node::ProbeDone callback() {
    return [this](agent::ProbeOutcome outcome) {
      ++calls[outcome.probe_id];
      list.push_back(std::move(outcome));
    };
  }
  bool each_called_once(std::size_t expected) const {
    if (calls.size() != expected) return false;
    for (const auto& [id, count] : calls) {
      if (count != 1) return false;
    }
    return true;
  }
};

inline agent::ProbeRequest request_to(std::uint16_t port, bool tls, std::uint64_t id = 1,
                               std::string host = "127.0.0.1") {
  agent::ProbeRequest request;
  request.probe_id = id;
  request.target = "de-fra-" + std::to_string(id);
  request.address = Endpoint{std::move(host), port};
  request.sni = "cdn.example.com";
  request.tls = tls;
  return request;
}

inline node::ProbeSettings short_timeouts() {
  node::ProbeSettings settings;
  settings.connect_timeout_ms = 2'000;
  settings.tls_timeout_ms = 2'000;
  return settings;
}

}  // namespace mesh::test
