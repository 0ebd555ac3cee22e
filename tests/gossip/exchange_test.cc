// Hand-driven exchanges of two or three cores over the in-test Network:
// dissemination, PRUNE and GRAFT, catch-up through SYNC, roster updates.
#include <doctest/doctest.h>

#include <algorithm>

#include "tests/gossip/fixture.h"

namespace mesh::gossip {
namespace {

using namespace testing;

bool holds(const GossipCore& core, std::uint32_t origin, std::uint64_t seq) {
  return core.held_seq(RecordKind::report, server_name(origin)) == seq;
}

void publish(Network& net, std::uint32_t i, const Bytes& raw) {
  auto effects = net.cores[i]->publish(raw, net.now);
  REQUIRE(effects.ok());
  net.take(i, std::move(effects.value()));
}

TEST_CASE("a record published on one core reaches the others, once each") {
  Network net(3, 11);
  net.load_all(signed_roster(make_roster(1, 3)));
  publish(net, 0, signed_report(0, 1, net.now));
  net.run(3);
  for (const auto& core : net.cores) CHECK(holds(*core, 0, 1));
  CHECK(net.converged());
  std::uint64_t useful = 0;
  for (const auto& core : net.cores) useful += core->counters().bodies_useful;
  CHECK(useful == 2);
}

TEST_CASE("PRUNE: a duplicate pushed body turns the edge lazy on both sides") {
  // Three cores, everyone eager with everyone: s1 and s2 both forward s0's
  // record to each other, each sees a duplicate and PRUNEs.
  Network net(3, 5);
  net.load_all(signed_roster(make_roster(1, 3)));
  for (const auto& core : net.cores) REQUIRE(core->eager_peers().size() == 2);
  publish(net, 0, signed_report(0, 1, net.now));
  net.run(4);
  std::uint64_t prunes_sent = 0, prunes_received = 0;
  for (const auto& core : net.cores) {
    prunes_sent += core->counters().prunes_sent;
    prunes_received += core->counters().prunes_received;
    CHECK(core->counters().records_duplicate <= 1);
  }
  CHECK(prunes_sent >= 1);
  CHECK(prunes_received == prunes_sent);
  const auto eager1 = net.cores[1]->eager_peers();
  const auto eager2 = net.cores[2]->eager_peers();
  CHECK(std::find(eager1.begin(), eager1.end(), 2u) == eager1.end());
  CHECK(std::find(eager2.begin(), eager2.end(), 1u) == eager2.end());
  // Next record: the tree s1 - s0 - s2 carries it with no duplicate.
  const auto duplicates_before = net.cores[1]->counters().records_duplicate +
                                 net.cores[2]->counters().records_duplicate;
  publish(net, 0, signed_report(0, 2, net.now));
  net.run(4);
  CHECK(holds(*net.cores[1], 0, 2));
  CHECK(holds(*net.cores[2], 0, 2));
  CHECK(net.cores[1]->counters().records_duplicate + net.cores[2]->counters().records_duplicate ==
        duplicates_before);
}

TEST_CASE("GRAFT: with no eager peer, an IHAVE then a timeout pull the body") {
  Network net(3, 9, [](CoreConfig& config) {
    config.eager_fanout = 0;
    config.lazy_fanout = 2;
    config.ihave_timeout_ms = 2'000;
    config.sync_interval_ms = 3'600'000;  // keep SYNC out of this exchange
  });
  net.load_all(signed_roster(make_roster(1, 3)));
  for (const auto& core : net.cores) REQUIRE(core->eager_peers().empty());
  publish(net, 0, signed_report(0, 1, net.now));
  net.run(1);  // IHAVE leaves s0
  CHECK(net.cores[0]->counters().ihave_entries_sent == 2);
  net.run(1);  // IHAVE arrives; the wait starts
  CHECK_FALSE(holds(*net.cores[1], 0, 1));
  net.run(4);  // timeout, GRAFT, body
  CHECK(holds(*net.cores[1], 0, 1));
  CHECK(holds(*net.cores[2], 0, 1));
  CHECK(net.cores[1]->counters().grafts_sent + net.cores[2]->counters().grafts_sent >= 1);
  CHECK(net.cores[0]->counters().grafts_received >= 1);
  // The GRAFT made tree edges: s0 now pushes to whoever grafted it.
  CHECK_FALSE(net.cores[0]->eager_peers().empty());
}

TEST_CASE("a core that was down catches up through SYNC") {
  Network net(3, 21, [](CoreConfig& config) { config.sync_interval_ms = 10'000; });
  net.load_all(signed_roster(make_roster(1, 3)));
  net.down[2] = true;
  for (std::uint64_t seq = 1; seq <= 3; ++seq) {
    publish(net, 0, signed_report(0, seq, net.now));
    publish(net, 1, signed_report(1, seq, net.now));
    net.run(5);
  }
  CHECK(holds(*net.cores[1], 0, 3));
  CHECK_FALSE(holds(*net.cores[2], 0, 3));
  CHECK_FALSE(net.converged());
  net.down[2] = false;
  int steps = 0;
  while (!net.converged() && steps < 60) {
    net.step();
    ++steps;
  }
  CHECK(net.converged());
  CHECK(holds(*net.cores[2], 0, 3));
  CHECK(holds(*net.cores[2], 1, 3));
  std::uint64_t syncs = 0;
  for (const auto& core : net.cores) syncs += core->counters().syncs_received;
  CHECK(syncs >= 1);
  MESSAGE("caught up after " << steps << " ticks");
}

TEST_CASE("the down core's own newer record flows the other way too (SYNC_REPLY)") {
  Network net(2, 3, [](CoreConfig& config) { config.sync_interval_ms = 5'000; });
  net.load_all(signed_roster(make_roster(1, 2)));
  net.down[1] = true;
  publish(net, 0, signed_report(0, 1, net.now));
  net.run(2);
  net.down[1] = false;
  // s1 made a record while cut off (its frames were lost).
  net.down[0] = true;
  publish(net, 1, signed_report(1, 1, net.now));
  net.run(2);
  net.down[0] = false;
  net.run(12);
  CHECK(net.converged());
  CHECK(holds(*net.cores[0], 1, 1));
  CHECK(holds(*net.cores[1], 0, 1));
}

TEST_CASE("a roster update published on one core spreads and removes a server everywhere") {
  Network net(4, 2);
  net.load_all(signed_roster(make_roster(1, 4)));
  for (std::uint32_t i = 0; i < 4; ++i) publish(net, i, signed_report(i, 1, net.now));
  net.run(6);
  REQUIRE(net.converged());
  CHECK(net.cores[0]->record_count() == 5);
  net.down[3] = true;  // s3 is decommissioned
  publish(net, 0, signed_roster(make_roster(2, 3)));
  net.run(6);
  for (std::uint32_t i = 0; i < 3; ++i) {
    CHECK(net.cores[i]->roster()->version == 2);
    CHECK(net.cores[i]->record_count() == 4);  // roster v2 and three reports
    CHECK_FALSE(net.cores[i]->held_seq(RecordKind::report, "s3").has_value());
  }
  CHECK(net.cores[0]->digest() == net.cores[1]->digest());
  CHECK(net.cores[0]->digest() == net.cores[2]->digest());
}

TEST_CASE("a core on an older roster is offered the new one by a peer") {
  // s2 misses the roster push (down), then talks: a peer sees its older
  // version and sends the roster along.
  Network net(3, 4, [](CoreConfig& config) { config.sync_interval_ms = 5'000; });
  net.load_all(signed_roster(make_roster(1, 3)));
  net.down[2] = true;
  publish(net, 0, signed_roster(make_roster(2, 3)));
  net.run(3);
  net.down[2] = false;
  CHECK(net.cores[2]->roster()->version == 1);
  net.run(15);
  CHECK(net.cores[2]->roster()->version == 2);
  CHECK(net.converged());
}

}  // namespace
}  // namespace mesh::gossip
