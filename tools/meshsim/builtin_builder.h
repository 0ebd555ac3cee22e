// Internal to the built-in scenarios (builtin*.cc): small builders, so
// each scenario reads as its timeline, and the scenarios defined outside
// builtin.cc.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tools/meshsim/fleet_gen.h"
#include "tools/meshsim/scenario.h"

namespace mesh::sim {

inline constexpr DurationMs kMinute = 60'000;

using verdict::ServerStatus;

// Small builders, so each scenario reads as its timeline.
struct Builder {
  Scenario s;
  std::uint32_t k = 0;  // countries

  ServerId id(std::uint32_t n) const { return generated_server_id(n, k); }
  // The `nth` (0-based) server of country `c` (generated round-robin).
  ServerId of_country(std::uint32_t c, std::uint32_t nth) const { return id(nth * k + c); }
  std::string country(std::uint32_t c) const { return kGeneratedCountries[c]; }
  ServerId last() const { return id(s.fleet.generated_nodes - 1); }

  Event& event(DurationMs at, EventKind kind, std::vector<ServerId> servers = {}) {
    Event e;
    e.at_ms = at;
    e.kind = kind;
    e.servers.servers = std::move(servers);
    s.events.push_back(std::move(e));
    return s.events.back();
  }
  Expectation& expect(ExpectKind kind) {
    s.expectations.push_back(Expectation{});
    s.expectations.back().kind = kind;
    return s.expectations.back();
  }
  void status(const ServerId& server, ServerStatus status, DurationMs at) {
    Expectation& e = expect(ExpectKind::status);
    e.server = server;
    e.status = status;
    e.at_ms = at;
  }
  void status_during(const ServerId& server, ServerStatus status, DurationMs from, DurationMs to) {
    Expectation& e = expect(ExpectKind::status_during);
    e.server = server;
    e.status = status;
    e.from_ms = from;
    e.to_ms = to;
  }
  void rotation(const ServerId& server, const std::string& route, bool in, DurationMs at) {
    Expectation& e = expect(in ? ExpectKind::in_rotation : ExpectKind::out_of_rotation);
    e.server = server;
    e.route = route;
    e.at_ms = at;
  }
  void digests_agree(DurationMs from, DurationMs to, DurationMs lag = kConvergedLagMs) {
    Expectation& e = expect(ExpectKind::digests_agree);
    e.at_ms = from;
    e.to_ms = to;
    e.lag_ms = lag;
  }
  void counter(const std::string& name, std::uint64_t value, bool at_least = true) {
    Expectation& e = expect(at_least ? ExpectKind::counter_at_least : ExpectKind::counter_at_most);
    e.counter = name;
    e.value = value;
  }
  // Neither a false verdict nor a missed one (docs/SIMULATOR.md, "Checks").
  void no_false_verdicts() {
    expect(ExpectKind::no_false_verdicts);
    expect(ExpectKind::no_missed_verdicts);
  }
  std::string route_of(std::uint32_t c) const {
    std::string code = country(c);
    for (char& ch : code) ch = static_cast<char>(ch - 'A' + 'a');
    return "route-" + code;
  }
};

// builtin_splits.cc: splits along borders, one-way borders, two censors.
void border_partition(Builder& b);
void one_way_country(Builder& b);
void two_censors(Builder& b);
void flapping_service(Builder& b);
// builtin_confirm.cc: confirmations within their budget.
void flaky_observer(Builder& b);
void flapping_target(Builder& b);

}  // namespace mesh::sim
