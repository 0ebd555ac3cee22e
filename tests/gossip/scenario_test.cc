// A 50-core scenario on the in-test network with a shuffled delivery order:
// every node reports every 60 s for ten minutes, then the digests must agree.
// Prints the duplicate-delivery factor (bodies received per useful record).
#include <doctest/doctest.h>

#include <cstdio>

#include "tests/gossip/fixture.h"

namespace mesh::gossip {
namespace {

using namespace testing;

struct Totals {
  std::uint64_t bodies = 0, useful = 0, ihave = 0, bytes_sent = 0, frames = 0;
};

Totals totals(const Network& net) {
  Totals t;
  for (const auto& core : net.cores) {
    const Counters& c = core->counters();
    t.bodies += c.bodies_pushed_received + c.bodies_repair_received;
    t.useful += c.bodies_useful;
    t.ihave += c.ihave_entries_received;
    t.bytes_sent += c.bytes_sent;
    t.frames += c.frames_sent;
  }
  return t;
}

// Runs `nodes` cores for `minutes` of reports, then up to two minutes of quiet.
// Returns ticks to converge after the last report, or -1.
int run_fleet(Network& net, std::uint32_t nodes, int minutes, std::uint64_t seed) {
  net.load_all(signed_roster(make_roster(1, nodes)));
  Rng offsets(seed);
  std::vector<int> offset(nodes);
  for (auto& o : offset) o = static_cast<int>(offsets.below(60));
  for (int second = 0; second < minutes * 60; ++second) {
    for (std::uint32_t i = 0; i < nodes; ++i) {
      if (second % 60 != offset[i]) continue;
      auto effects = net.cores[i]->publish(
          signed_report(i, static_cast<std::uint64_t>(second / 60 + 1), net.now, 1, second % 997),
          net.now);
      REQUIRE(effects.ok());
      net.take(i, std::move(effects.value()));
    }
    net.step();
  }
  for (int tick = 0; tick < 120; ++tick) {
    if (net.converged()) return tick;
    net.step();
  }
  return -1;
}

TEST_CASE("50 cores, shuffled delivery: digests converge with few duplicate bodies") {
  constexpr std::uint32_t kNodes = 50;
  constexpr int kMinutes = 10;
  Network net(kNodes, 2024);
  const int ticks = run_fleet(net, kNodes, kMinutes, 77);
  CHECK(ticks >= 0);
  REQUIRE(net.converged());
  for (const auto& core : net.cores) CHECK(core->record_count() == kNodes + 1);
  const Totals t = totals(net);
  // Every node must get every other node's kMinutes reports once.
  const std::uint64_t floor = std::uint64_t{kNodes} * (kNodes - 1) * kMinutes;
  CHECK(t.useful == floor);
  const double factor = static_cast<double>(t.bodies) / static_cast<double>(t.useful);
  std::printf("gossip scenario: %u cores, %d min: %llu bodies for %llu useful records, "
              "duplicate factor %.3f; %.1f IHAVE entries per record; %llu frames, "
              "%.0f bytes sent per node per minute; converged %d ticks after the last report\n",
              kNodes, kMinutes, static_cast<unsigned long long>(t.bodies),
              static_cast<unsigned long long>(t.useful), factor,
              static_cast<double>(t.ihave) / static_cast<double>(t.useful),
              static_cast<unsigned long long>(t.frames),
              static_cast<double>(t.bytes_sent) / kNodes / kMinutes, ticks);
  Counters sum;
  std::size_t eager_total = 0;
  for (const auto& core : net.cores) {
    eager_total += core->eager_peers().size();
    core->counters().for_each([&](const char*, std::uint64_t) {});
    const Counters& c = core->counters();
#define ADD(name) sum.name += c.name;
    MESH_GOSSIP_COUNTERS(ADD)
#undef ADD
  }
  sum.for_each([](const char* name, std::uint64_t value) {
    if (value != 0) std::printf("  %s=%llu\n", name, static_cast<unsigned long long>(value));
  });
  std::printf("  mean eager degree %.2f\n", static_cast<double>(eager_total) / kNodes);
  CHECK(factor <= 1.5);
}

TEST_CASE("the same seed gives the same run, byte for byte") {
  Network a(12, 99), b(12, 99);
  run_fleet(a, 12, 2, 5);
  run_fleet(b, 12, 2, 5);
  for (std::uint32_t i = 0; i < 12; ++i) {
    CHECK(a.cores[i]->digest() == b.cores[i]->digest());
    CHECK(a.cores[i]->counters().bytes_sent == b.cores[i]->counters().bytes_sent);
    CHECK(a.cores[i]->eager_peers() == b.cores[i]->eager_peers());
  }
}

}  // namespace
}  // namespace mesh::gossip
