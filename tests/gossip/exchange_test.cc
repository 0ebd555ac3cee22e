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

bool contains(const std::vector<std::uint32_t>& list, std::uint32_t value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

TEST_CASE("PRUNE: a duplicate pushed body drops the edge from that origin's tree") {
  // Three cores form a triangle: s1 and s2 both forward s0's record to each
  // other, see a duplicate, and PRUNE the s1-s2 edge from s0's tree only.
  Network net(3, 5);
  net.load_all(signed_roster(make_roster(1, 3)));
  for (const auto& core : net.cores) REQUIRE(core->eager_peers().size() == 2);
  publish(net, 0, signed_report(0, 1, net.now));
  net.run(4);
  std::uint64_t prunes_sent = 0, prunes_received = 0;
  for (const auto& core : net.cores) {
    prunes_sent += core->counters().prunes_sent;
    prunes_received += core->counters().prunes_received;
  }
  CHECK(prunes_sent >= 1);
  CHECK(prunes_received == prunes_sent);
  CHECK_FALSE(contains(net.cores[1]->eager_peers_for(RecordKind::report, 0), 2));
  CHECK_FALSE(contains(net.cores[2]->eager_peers_for(RecordKind::report, 0), 1));
  // Other origins' trees keep the edge.
  CHECK(contains(net.cores[1]->eager_peers_for(RecordKind::report, 1), 2));
  // Next record of s0: the tree s1 - s0 - s2 carries it with no duplicate.
  const auto duplicates_before = net.cores[1]->counters().records_duplicate +
                                 net.cores[2]->counters().records_duplicate;
  publish(net, 0, signed_report(0, 2, net.now));
  net.run(4);
  CHECK(holds(*net.cores[1], 0, 2));
  CHECK(holds(*net.cores[2], 0, 2));
  CHECK(net.cores[1]->counters().records_duplicate + net.cores[2]->counters().records_duplicate ==
        duplicates_before);
}

TEST_CASE("GRAFT: a lost tree push is pulled after an IHAVE and a timeout") {
  Network net(3, 9, [](CoreConfig& config) {
    config.announce_interval_ms = 1'000;
    config.ihave_timeout_ms = 2'000;
    config.sync_interval_ms = 3'600'000;  // keep SYNC out of this exchange
  });
  net.load_all(signed_roster(make_roster(1, 3)));
  publish(net, 0, signed_report(0, 1, net.now));
  net.run(4);  // s0's tree is now s1 - s0 - s2
  REQUIRE_FALSE(contains(net.cores[1]->eager_peers_for(RecordKind::report, 0), 2));
  net.cut = [](std::uint32_t from, std::uint32_t to) { return from == 0 && to == 2; };
  publish(net, 0, signed_report(0, 2, net.now));
  net.run(2);  // s1 has it and announces it to s2
  CHECK(holds(*net.cores[1], 0, 2));
  CHECK_FALSE(holds(*net.cores[2], 0, 2));
  // IHAVE arrives (+1 tick), the 2 s wait runs out (+2), GRAFT reaches s1
  // (+1), the body comes back (+1).
  net.run(4);
  CHECK_FALSE(holds(*net.cores[2], 0, 2));
  net.run(1);
  CHECK(holds(*net.cores[2], 0, 2));
  CHECK(net.cores[2]->counters().grafts_sent >= 1);
  CHECK(net.cores[1]->counters().grafts_received >= 1);
  // The GRAFT put the s1 - s2 edge back into s0's tree, on both sides.
  CHECK(contains(net.cores[1]->eager_peers_for(RecordKind::report, 0), 2));
  CHECK(contains(net.cores[2]->eager_peers_for(RecordKind::report, 0), 1));
}

TEST_CASE("no IHAVE goes to a peer that announced the record to us") {
  // s0's tree is s1 - s0 - s2, and s1 - s2 is a lazy edge of it. s0's push
  // to s2 comes a tick late, so s1's IHAVE reaches s2 about when the body
  // does (before or after it, as the shuffle falls): s2 then knows s1 holds
  // the record and announces it to nobody. Several seeds, so both orders run.
  for (std::uint64_t seed : {9, 10, 11, 12, 13, 14}) {
    CAPTURE(seed);
    Network net(3, seed, [](CoreConfig& config) {
      config.announce_interval_ms = 1'000;
      config.ihave_timeout_ms = 2'000;
      config.sync_interval_ms = 3'600'000;
    });
    net.load_all(signed_roster(make_roster(1, 3)));
    publish(net, 0, signed_report(0, 1, net.now));
    net.run(4);
    REQUIRE_FALSE(contains(net.cores[2]->eager_peers_for(RecordKind::report, 0), 1));
    const Counters before1 = net.cores[1]->counters();
    const Counters before2 = net.cores[2]->counters();
    net.late = [](std::uint32_t from, std::uint32_t to) { return from == 0 && to == 2; };
    publish(net, 0, signed_report(0, 2, net.now));
    net.run(4);
    CHECK(holds(*net.cores[2], 0, 2));
    // s1 announced it to s2; s2, which heard that, announced it to no one.
    CHECK(net.cores[1]->counters().ihave_entries_sent == before1.ihave_entries_sent + 1);
    CHECK(net.cores[2]->counters().ihave_entries_sent == before2.ihave_entries_sent);
    CHECK(net.cores[2]->counters().ihave_entries_spared == before2.ihave_entries_spared + 1);
    CHECK(net.cores[1]->counters().ihave_entries_received == before1.ihave_entries_received);
    CHECK(net.cores[2]->counters().grafts_sent == before2.grafts_sent);
  }
}

TEST_CASE("a neighbour back from a restart or a dead spell is announced what it missed") {
  // SYNC is kept out: without the catch-up, s2 would wait for it. The
  // dead spell is found by silence alone (no transport here to report a
  // failed path), so the dead window is short.
  const auto tune = [](CoreConfig& config) {
    config.ihave_timeout_ms = 1'000;
    config.sync_interval_ms = 3'600'000;
    config.keepalive_interval_ms = 15'000;
    config.link_dead_after_ms = 30'000;
  };
  Network net(3, 31, tune);
  const Bytes roster = signed_roster(make_roster(1, 3));
  net.load_all(roster);
  publish(net, 0, signed_report(0, 1, net.now));
  net.run(4);
  REQUIRE(holds(*net.cores[2], 0, 1));
  std::uint64_t catch_ups = 0;
  SUBCASE("a restart: a newer boot counter") {
    net.down[2] = true;
    publish(net, 0, signed_report(0, 2, net.now));
    net.run(4);  // s0's push and s1's IHAVE to s2 are lost
    REQUIRE(holds(*net.cores[1], 0, 2));
    // s2 restarts from its store (it held report 1): a new core, boot 2.
    CoreConfig config = config_for(2, 2);
    tune(config);
    net.cores[2] = std::make_unique<GossipCore>(config, 77);
    const std::vector<Bytes> stored{roster, signed_report(0, 1, kStartMs)};
    (void)net.cores[2]->load(stored, net.now);
    net.down[2] = false;
    net.run(6);  // its first keepalives, IHAVE back, GRAFT, the body
    CHECK(holds(*net.cores[2], 0, 2));
    CHECK(net.cores[2]->counters().grafts_sent >= 1);
  }
  SUBCASE("a dead spell: silent past link_dead_after_ms, then heard again") {
    net.down[2] = true;
    publish(net, 0, signed_report(0, 2, net.now));
    net.run(40);  // s0 and s1 find the link dead
    REQUIRE(net.cores[0]->counters().links_dead >= 1);
    net.down[2] = false;
    net.run(8);
    CHECK(net.cores[0]->counters().links_revived + net.cores[1]->counters().links_revived >= 1);
    CHECK(holds(*net.cores[2], 0, 2));
  }
  for (const auto& core : net.cores) catch_ups += core->counters().catch_ups;
  CHECK(catch_ups >= 1);
  CHECK(net.cores[2]->counters().syncs_received == 0);
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

TEST_CASE("SYNC leaves a record younger than sync_settle_ms to its tree, then repairs it") {
  // Two cores SYNC each other every tick. s1 misses s0's push (the link
  // drops s0's frames for two ticks): only SYNC can bring the record (s1 is
  // s0's tree peer, so no IHAVE goes to it), and it does once settled.
  Network net(2, 7, [](CoreConfig& config) {
    config.sync_interval_ms = 1'000;
    config.sync_settle_ms = 10'000;
  });
  net.load_all(signed_roster(make_roster(1, 2)));
  net.run(3);
  const UnixMs published = net.now;
  net.cut = [](std::uint32_t from, std::uint32_t) { return from == 0; };
  publish(net, 0, signed_report(0, 1, published));
  net.run(2);
  net.cut = nullptr;
  while (net.now < published + 9'000) net.step();
  CHECK_FALSE(holds(*net.cores[1], 0, 1));
  // Rounds ran, and matched: the young record is outside every summary.
  CHECK(net.cores[1]->counters().summaries_received >= 5);
  CHECK(net.cores[1]->counters().summaries_matched == net.cores[1]->counters().summaries_received);
  CHECK(net.cores[1]->counters().bodies_repair_received == 0);
  while (net.now < published + 13'000) net.step();
  CHECK(holds(*net.cores[1], 0, 1));
  CHECK(net.cores[1]->counters().bodies_repair_received >= 1);
  CHECK(net.converged());
}

std::uint64_t total(const Network& net, std::uint64_t Counters::*counter) {
  std::uint64_t sum = 0;
  for (const auto& core : net.cores) sum += core->counters().*counter;
  return sum;
}

TEST_CASE("cores that agree end each SYNC round at the SUMMARY; one that lags gets the entries") {
  Network net(3, 17, [](CoreConfig& config) { config.sync_interval_ms = 5'000; });
  net.load_all(signed_roster(make_roster(1, 3)));
  for (std::uint32_t i = 0; i < 3; ++i) publish(net, i, signed_report(i, 1, net.now));
  net.run(10);
  REQUIRE(net.converged());
  const std::uint64_t syncs_before = total(net, &Counters::syncs_sent);
  const std::uint64_t matched_before = total(net, &Counters::summaries_matched);
  const std::uint64_t bytes_before = total(net, &Counters::bytes_sent);
  const std::uint64_t frames_before = total(net, &Counters::frames_sent);
  net.run(60);  // 12 rounds per core, nothing new
  CHECK(total(net, &Counters::summaries_matched) - matched_before >= 30);
  CHECK(total(net, &Counters::syncs_sent) == syncs_before);
  CHECK(total(net, &Counters::summaries_throttled) == 0);
  // Summaries and keepalives only: under 100 bytes a frame on average.
  const std::uint64_t frames = total(net, &Counters::frames_sent) - frames_before;
  CHECK(frames > 0);
  CHECK(total(net, &Counters::bytes_sent) - bytes_before < 100 * frames);

  // s2 misses two records while down; the next round that touches it differs.
  net.down[2] = true;
  publish(net, 0, signed_report(0, 2, net.now));
  publish(net, 1, signed_report(1, 2, net.now));
  net.run(3);
  net.down[2] = false;
  net.run(30);
  CHECK(net.converged());
  CHECK(holds(*net.cores[2], 0, 2));
  CHECK(holds(*net.cores[2], 1, 2));
  CHECK(total(net, &Counters::syncs_sent) > syncs_before);
}

TEST_CASE("after a repair a core opens its rounds with the full SYNC for sync_full_for_ms") {
  Network net(2, 23, [](CoreConfig& config) {
    config.sync_interval_ms = 5'000;
    config.sync_full_for_ms = 20'000;
  });
  net.load_all(signed_roster(make_roster(1, 2)));
  net.run(40);  // the first rounds go in full; quiet rounds since then
  Counters before = net.cores[1]->counters();
  net.run(20);
  CHECK(net.cores[1]->counters().summaries_sent - before.summaries_sent >= 3);
  CHECK(net.cores[1]->counters().syncs_sent == before.syncs_sent);
  // s1 misses s0's push; only SYNC can bring it (s1 is s0's tree peer).
  net.cut = [](std::uint32_t from, std::uint32_t) { return from == 0; };
  publish(net, 0, signed_report(0, 1, net.now));
  net.run(1);
  net.cut = nullptr;
  int steps = 0;
  while (!holds(*net.cores[1], 0, 1) && steps++ < 60) net.step();
  REQUIRE(holds(*net.cores[1], 0, 1));
  before = net.cores[1]->counters();
  net.run(19);  // within the 20 s: every round s1 opens is a full SYNC
  CHECK(net.cores[1]->counters().summaries_sent == before.summaries_sent);
  CHECK(net.cores[1]->counters().syncs_sent - before.syncs_sent >= 3);
  before = net.cores[1]->counters();
  net.run(20);  // quiet again: summaries
  CHECK(net.cores[1]->counters().summaries_sent - before.summaries_sent >= 3);
}

// A GRAFT answered is a repair that worked (the push was late or lost and
// an announcer had the body): no sign that records go astray, so the
// core's rounds keep opening with a SUMMARY (docs/PROTOCOL.md §5).
TEST_CASE("a record pulled by GRAFT does not make the rounds full") {
  Network net(3, 9, [](CoreConfig& config) {
    config.ihave_timeout_ms = 2'000;
    config.sync_interval_ms = 5'000;
    config.sync_full_for_ms = 60'000;
  });
  net.load_all(signed_roster(make_roster(1, 3)));
  publish(net, 0, signed_report(0, 1, net.now));
  net.run(40);  // s0's tree is s1 - s0 - s2; every first round is past
  REQUIRE_FALSE(contains(net.cores[1]->eager_peers_for(RecordKind::report, 0), 2));
  net.cut = [](std::uint32_t from, std::uint32_t to) { return from == 0 && to == 2; };
  publish(net, 0, signed_report(0, 2, net.now));
  int steps = 0;
  while (!holds(*net.cores[2], 0, 2) && steps++ < 20) net.step();
  net.cut = nullptr;
  REQUIRE(holds(*net.cores[2], 0, 2));
  CHECK(net.cores[2]->counters().grafts_sent >= 1);
  const Counters before = net.cores[2]->counters();
  net.run(20);
  CHECK(net.cores[2]->counters().summaries_sent - before.summaries_sent >= 3);
  CHECK(net.cores[2]->counters().syncs_sent == before.syncs_sent);
}

TEST_CASE("SUMMARY: a peer's extra summaries within half a round are not answered") {
  // s0 opens a round every second with its only partner, s1 (30 s rounds):
  // s1 hashes its records at most once per 15 s for it.
  Network net(2, 19, [](CoreConfig& config) {
    config.sync_interval_ms = config.self == "s0" ? 1'000 : 30'000;
  });
  net.load_all(signed_roster(make_roster(1, 2)));
  publish(net, 0, signed_report(0, 1, net.now));
  net.run(40);  // past each core's first round, which goes in full
  const Counters before = net.cores[1]->counters();
  net.run(31);
  const Counters& s1 = net.cores[1]->counters();
  CHECK(s1.summaries_received - before.summaries_received >= 30);
  const std::uint64_t answered = (s1.summaries_received - before.summaries_received) -
                                 (s1.summaries_throttled - before.summaries_throttled);
  CHECK(answered >= 2);
  CHECK(answered <= 3);
  CHECK(s1.summaries_matched - before.summaries_matched == answered);
  CHECK(s1.syncs_sent == before.syncs_sent);
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

TEST_CASE("a kept summary follows every change at or before its cutoff, and only those") {
  Network net(3, 23, [](CoreConfig& config) { config.sync_interval_ms = 600'000; });
  net.load_all(signed_roster(make_roster(1, 3)));
  publish(net, 0, signed_report(0, 1, net.now));
  publish(net, 1, signed_report(1, 1, net.now));
  net.run(5);
  REQUIRE(net.converged());
  GossipCore& core = *net.cores[0];
  const UnixMs cutoff = net.now;
  const auto before = core.summary(cutoff);
  CHECK(net.cores[1]->summary(cutoff) == before);
  // A record after the cutoff (s2's first) leaves it as it was.
  publish(net, 2, signed_report(2, 1, cutoff + 500));
  net.run(3);
  REQUIRE(net.converged());
  CHECK(core.summary(cutoff) == before);
  // s0's next report replaces one at the cutoff: the summary moves, on the
  // node that kept it as on one that hashes afresh.
  publish(net, 0, signed_report(0, 2, cutoff + 1'000));
  net.run(3);
  REQUIRE(net.converged());
  const auto after = core.summary(cutoff);
  CHECK(after != before);
  CHECK(net.cores[2]->summary(cutoff) == after);
  // A record dated at the cutoff itself counts too.
  publish(net, 2, signed_report(2, 2, cutoff));
  net.run(3);
  REQUIRE(net.converged());
  CHECK(core.summary(cutoff) != after);
  CHECK(core.summary(cutoff) == net.cores[1]->summary(cutoff + 1));  // nothing new in between
}

// A roster goes through the core's RecordInterner as a report held without
// its decoded form does: cores that share one (meshsim's nodes) hold one
// copy of it. Each kept its own before: at 3000 servers a roster is about
// 600 KB, and meshsim's nodes held 1.8 GB of copies.
TEST_CASE("cores that share a record interner share one copy of the roster") {
  struct SharingInterner final : RecordInterner {
    std::shared_ptr<const StoredRecord> held;
    int calls = 0;
    std::shared_ptr<const StoredRecord> intern(const EnvelopeView& accepted) override {
      ++calls;
      if (held == nullptr || !std::equal(held->envelope.raw.begin(), held->envelope.raw.end(),
                                         accepted.raw.begin(), accepted.raw.end())) {
        held = make_stored_record(accepted, nullptr);
      }
      return held;
    }
  };
  SharingInterner interner;
  const Bytes roster = signed_roster(make_roster(1, 4));
  auto roster_envelope = [](const GossipCore& core) {
    const Envelope* found = nullptr;
    core.for_each_record([&](const HeldRecord& held) {
      if (held.envelope->kind == RecordKind::roster) found = held.envelope;
    });
    return found;
  };
  GossipCore a(config_for(0), 1, SharedWork{nullptr, nullptr, &interner});
  GossipCore b(config_for(1), 2, SharedWork{nullptr, nullptr, &interner});
  REQUIRE(a.publish(roster, kStartMs).ok());
  REQUIRE(b.publish(roster, kStartMs).ok());
  CHECK(interner.calls == 2);
  REQUIRE(roster_envelope(a) != nullptr);
  CHECK(roster_envelope(a) == roster_envelope(b));
  CHECK(roster_envelope(a)->raw == roster);
}

}  // namespace
}  // namespace mesh::gossip
