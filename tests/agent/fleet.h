// A test driver for node agents (node/agent/agent.h): N agents on an
// in-memory network with virtual time, each with a MemoryStore that every
// StoreBatch is applied to. Probe requests are answered by `probe_outcome`
// one step later, self-checks at once by `self_check`. chitchat-style tier 2:
// hand-driven exchanges, no sockets, no clock.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "node/agent/agent.h"
#include "node/agent/store.h"
#include "tests/gossip/fixture.h"

namespace mesh::agent::testing {

using gossip::testing::kStartMs;
using gossip::testing::operator_key;
using gossip::testing::server_name;
using gossip::testing::test_key;

// A roster of `count` servers in `countries` countries (round-robin), with
// short intervals so tests run few steps: reports and probes every 10 s.
inline Roster small_roster(std::uint32_t count, std::uint32_t countries = 1,
                           std::uint64_t version = 1) {
  static const char* kCodes[] = {"DE", "NL", "FR", "GB", "US"};
  Roster roster = gossip::testing::make_roster(version, count);
  for (std::uint32_t i = 0; i < count; ++i) roster.servers[i].country = kCodes[i % countries];
  roster.routes.push_back(Route{"all", "All servers"});
  for (auto& server : roster.servers) server.routes = {"all"};
  roster.params.heartbeat_interval_ms = 10'000;
  roster.params.probe_interval_ms = 10'000;
  roster.params.stale_after_ms = 30'000;
  roster.params.fail_streak = 3;
  roster.params.epoch_ms = 3'600'000;
  return roster;
}

inline AgentConfig agent_config(std::uint32_t i, std::uint64_t boot = 1) {
  AgentConfig config;
  config.core = gossip::testing::config_for(i, boot);
  config.verdict_refresh_ms = 1'000;
  return config;
}

struct Node {
  std::unique_ptr<Agent> agent;
  MemoryStore store;
  std::vector<AgentEffects> log;  // every effect returned, when keep_log
  std::uint64_t boot = 0;
  bool down = false;
};

class Fleet {
 public:
  Fleet(std::uint32_t count, const Roster& roster, std::uint64_t seed = 1)
      : roster_record_(gossip::testing::signed_roster(roster)), seed_(seed) {
    nodes.resize(count);
    for (std::uint32_t i = 0; i < count; ++i) start(i);
  }

  // (Re)starts node i from what its store holds, with the next boot counter.
  void start(std::uint32_t i, const std::function<void(AgentConfig&)>& tune = nullptr) {
    Node& node = nodes[i];
    node.down = false;
    AgentConfig config = agent_config(i, ++node.boot);
    if (tune) tune(config);
    node.agent = std::make_unique<Agent>(config, seed_ * 1000 + i * 10 + node.boot);
    auto stored = node.store.load();
    auto started = node.agent->start(stored.value(), now);
    REQUIRE(started.ok());
    take(i, std::move(started.value()));
    if (node.agent->roster() == nullptr) {
      auto offered = node.agent->offer_record(roster_record_, now);
      REQUIRE(offered.ok());
      take(i, std::move(offered.value()));
    }
  }

  // Node i stops (a kill: nothing flushed).
  void kill(std::uint32_t i) {
    nodes[i].down = true;
    nodes[i].agent.reset();
  }

  void take(std::uint32_t from, AgentEffects effects) {
    Node& node = nodes[from];
    REQUIRE(node.store.apply(effects.store).ok());
    for (auto& out : effects.send) frames_.push_back({out.to, std::move(out.frame)});
    for (const ProbeRequest& request : effects.probes) probes_.push_back({now + probe_duration_ms, from, request});
    if (effects.self_check_due && answer_self_checks) {
      SelfCheckOutcome outcome;
      outcome.self_check = self_check ? self_check(from) : SelfCheck{};
      outcome.metrics.cpu_permille = 42;
      take(from, node.agent->on_self_check(outcome, now));
    }
    if (keep_log) node.log.push_back(std::move(effects));
  }

  // One second: deliver frames and probe outcomes from the last step, then tick.
  void step() {
    now += 1'000;
    auto frames = std::move(frames_);
    frames_.clear();
    for (auto& [to, frame] : frames) {
      if (gossip_reaches && !gossip_reaches(to)) continue;
      if (to < nodes.size() && !nodes[to].down) take(to, nodes[to].agent->on_frame(frame, now));
    }
    std::vector<PendingProbe> probes;
    std::erase_if(probes_, [&](PendingProbe& probe) {
      if (probe.due_ms > now) return false;
      probes.push_back(std::move(probe));
      return true;
    });
    for (auto& [due_ms, from, request] : probes) {
      if (nodes[from].down) continue;
      ProbeOutcome outcome;
      outcome.probe_id = request.probe_id;
      outcome.target = request.target;
      outcome.tls = request.tls;
      outcome.failure = probe_outcome ? probe_outcome(from, request) : ProbeFailure::none;
      outcome.wire_bytes = request.tls ? 8'192 : 560;
      ++probes_answered;
      take(from, nodes[from].agent->on_probe_outcome(outcome, now));
    }
    for (std::uint32_t i = 0; i < nodes.size(); ++i) {
      if (!nodes[i].down) take(i, nodes[i].agent->on_tick(now));
    }
  }

  void run_for(DurationMs ms) {
    for (DurationMs t = 0; t < ms; t += 1'000) step();
  }

  Agent& agent(std::uint32_t i) { return *nodes[i].agent; }
  const Bytes& roster_record() const { return roster_record_; }

  std::vector<Node> nodes;
  UnixMs now = kStartMs;
  bool keep_log = false;
  bool answer_self_checks = true;  // false: no self-check answered, so no report is made
  std::uint64_t probes_answered = 0;
  // A probe's outcome arrives at the first step at least this long after
  // the request (a timeout takes seconds).
  DurationMs probe_duration_ms = 1'000;
  std::function<ProbeFailure(std::uint32_t observer, const ProbeRequest&)> probe_outcome;
  // When set and false for a node, the frames sent to it are lost (a node
  // cut off from the fleet's gossip; its probes are probe_outcome's).
  std::function<bool(std::uint32_t to)> gossip_reaches;
  std::function<SelfCheck(std::uint32_t node)> self_check;

 private:
  Bytes roster_record_;
  std::uint64_t seed_;
  std::vector<std::pair<std::uint32_t, Bytes>> frames_;
  struct PendingProbe {
    UnixMs due_ms;
    std::uint32_t from;
    ProbeRequest request;
  };
  std::vector<PendingProbe> probes_;
};

// The nodes whose probe plan holds `target` (every node holds the same plan).
inline std::vector<std::uint32_t> witnesses_of(Fleet& fleet, std::uint32_t target) {
  std::vector<std::uint32_t> out;
  for (std::uint32_t i = 0; i < fleet.nodes.size(); ++i) {
    if (i == target) continue;
    const auto targets = fleet.agent(i).probe_targets(fleet.now);
    if (std::find(targets.begin(), targets.end(), target) != targets.end()) out.push_back(i);
  }
  return out;
}

// A server's verdict in `e` (REQUIRE: it is there). `e` must outlive it.
inline const verdict::ServerVerdict& verdict_of(const verdict::Evaluation& e, const ServerId& id) {
  auto it = std::find_if(e.servers.begin(), e.servers.end(), [&](const auto& v) { return v.id == id; });
  REQUIRE(it != e.servers.end());
  return *it;
}

}  // namespace mesh::agent::testing
