// A 50-core scenario on the in-test network with a shuffled delivery order:
// every node reports every 60 s for ten minutes, then the digests must agree.
// Prints the duplicate-delivery factor (bodies received per useful record).
#include <algorithm>
#include <doctest/doctest.h>

#include <cmath>
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

// Ticks until every core holds s<origin>'s record `seq`, or -1 after `limit`.
int ticks_to_reach_all(Network& net, std::uint32_t origin, std::uint64_t seq, int limit) {
  for (int tick = 0; tick <= limit; ++tick) {
    bool all = true;
    for (const auto& core : net.cores) {
      all = all && core->held_seq(RecordKind::report, server_name(origin)) >= seq;
    }
    if (all) return tick;
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
  std::printf("gossip scenario: %u cores, %d min of reports: %llu bodies for %llu useful, "
              "duplicate factor %.3f (first round of every tree included); %.1f IHAVE entries "
              "per record; %.0f bytes sent per node per minute; digests agree %d ticks after "
              "the last report\n",
              kNodes, kMinutes, static_cast<unsigned long long>(t.bodies),
              static_cast<unsigned long long>(t.useful), factor,
              static_cast<double>(t.ihave) / static_cast<double>(t.useful),
              static_cast<double>(t.bytes_sent) / kNodes / kMinutes, ticks);
  CHECK(factor <= 1.5);
  const std::size_t report_bytes = signed_report(0, 1, net.now).size();
  std::printf("gossip scenario: report %zu B; floor %zu B per node per minute (receive and send "
              "each of %u reports once)\n",
              report_bytes, 2 * report_bytes * (kNodes - 1), kNodes - 1);

  // Steady state: one more round of reports on the settled trees.
  Rng order(3);
  const std::uint64_t next_seq = kMinutes + 1;
  for (std::uint32_t i = 0; i < kNodes; ++i) {
    auto effects = net.cores[i]->publish(signed_report(i, next_seq, net.now, 1, 998), net.now);
    REQUIRE(effects.ok());
    net.take(i, std::move(effects.value()));
    if (order.below(4) == 0) net.step();
  }
  const int spread_ticks = ticks_to_reach_all(net, kNodes - 1, next_seq, 40);
  net.run(20);
  REQUIRE(net.converged());
  const Totals after = totals(net);
  const double steady = static_cast<double>(after.bodies - t.bodies) /
                        static_cast<double>(after.useful - t.useful);
  std::printf("gossip scenario: steady round: duplicate factor %.3f; the last report reached "
              "all %u cores in %d ticks (2*log2(N) = %.1f)\n",
              steady, kNodes, spread_ticks, 2 * std::log2(double{kNodes}));
  CHECK(steady <= 1.2);
  CHECK(spread_ticks >= 0);
  CHECK(spread_ticks <= 2 * std::log2(double{kNodes}));
}

TEST_CASE("each core keeps link keys only with its SYNC partners and those that chose it") {
  // Lazy IHAVE goes to overlay neighbours and SYNC to a fixed partner set,
  // so link key derivation is O(N * degree) over the fleet, not O(N^2).
  constexpr std::uint32_t kNodes = 50;
  Network net(kNodes, 2024);
  REQUIRE(run_fleet(net, kNodes, 10, 77) >= 0);
  std::vector<std::vector<std::uint32_t>> allowed(kNodes);
  for (std::uint32_t i = 0; i < kNodes; ++i) {
    for (std::uint32_t peer : net.cores[i]->sync_partners()) {
      allowed[i].push_back(peer);
      allowed[peer].push_back(i);  // it syncs with us: we answer it
    }
  }
  std::size_t most = 0;
  for (std::uint32_t i = 0; i < kNodes; ++i) {
    const auto linked = net.cores[i]->linked_peers();
    most = std::max(most, linked.size());
    for (std::uint32_t peer : linked) {
      CHECK(std::find(allowed[i].begin(), allowed[i].end(), peer) != allowed[i].end());
    }
  }
  std::printf("gossip scenario: at most %zu link keys per core of %u members\n", most, kNodes);
  CHECK(most < kNodes / 2);
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
