// Overlay repair (gossip/link_watch.h, docs/PROTOCOL.md, Gossip, "Overlay
// repair"): silent neighbours are found dead and stand-ins take their place,
// deterministically from the seed and bounded; a revived neighbour retires
// its stand-in; and a core whose every overlay link is cut still gets the
// fleet's records within a few rounds, where without repair only SYNC
// reaches it.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "gossip/link_watch.h"
#include "gossip/peers.h"
#include "tests/gossip/fixture.h"

namespace mesh::gossip {
namespace {

using namespace testing;

constexpr UnixMs kT = 1'000'000;
constexpr DurationMs kDead = 30'000;

// Members 1-19 of a 20-member roster, overlay neighbours 2, 5, 7 and 9, the
// passive view drawn from seed 7.
struct Twenty {
  const std::vector<std::uint32_t> neighbours = {2, 5, 7, 9};
  std::vector<std::uint32_t> peers;
  Twenty() {
    for (std::uint32_t i = 1; i < 20; ++i) peers.push_back(i);
  }
  void reset(LinkWatch& watch) const {
    Rng rng(7);
    watch.reset(neighbours, peers, 20, rng);
  }
};

TEST_CASE("link watch: silent neighbours die, stand-ins come from the passive view") {
  const Twenty twenty;
  const auto& neighbours = twenty.neighbours;
  const auto& peers = twenty.peers;
  LinkWatch watch;
  twenty.reset(watch);
  CHECK(watch.tick(kT, kDead).empty());  // the first tick starts the clocks
  for (std::uint32_t n : {2u, 5u, 7u}) watch.heard(n, kT + 20'000, kDead);
  // Every peer outside the overlay was heard lately: any is a fine stand-in.
  for (std::uint32_t p : peers) {
    if (std::find(neighbours.begin(), neighbours.end(), p) == neighbours.end()) watch.heard(p, kT + 25'000, kDead);
  }
  auto changes = watch.tick(kT + 31'000, kDead);
  REQUIRE(changes.died == std::vector<std::uint32_t>{9});
  REQUIRE(changes.stand_ins.size() == 1);
  const std::uint32_t stand_in = changes.stand_ins[0].second;
  CHECK(changes.stand_ins[0].first == 9);
  CHECK(std::find(neighbours.begin(), neighbours.end(), stand_in) == neighbours.end());
  CHECK(stand_in != 0);
  CHECK(watch.dead(9));
  CHECK(watch.stand_in(stand_in));
  CHECK(watch.dead_count() == 1);
  // Nothing new while nothing changes.
  watch.heard(stand_in, kT + 40'000, kDead);
  for (std::uint32_t n : {2u, 5u, 7u}) watch.heard(n, kT + 40'000, kDead);
  CHECK(watch.tick(kT + 41'000, kDead).empty());
  // The dead neighbour speaks again: alive, and its stand-in retires.
  const LinkWatch::Heard heard = watch.heard(9, kT + 45'000, kDead);
  CHECK(heard.revived);
  REQUIRE(heard.retired.has_value());
  CHECK(*heard.retired == stand_in);
  CHECK_FALSE(watch.dead(9));
  CHECK(watch.stand_in_count() == 0);

  // The same seed picks the same stand-in.
  LinkWatch again;
  twenty.reset(again);
  again.tick(kT, kDead);
  for (std::uint32_t n : {2u, 5u, 7u}) again.heard(n, kT + 20'000, kDead);
  for (std::uint32_t p : peers) {
    if (std::find(neighbours.begin(), neighbours.end(), p) == neighbours.end()) again.heard(p, kT + 25'000, kDead);
  }
  CHECK(again.tick(kT + 31'000, kDead).stand_ins[0].second == stand_in);
}

TEST_CASE("link watch: a silent stand-in is replaced; never more stand-ins than neighbours") {
  LinkWatch watch;
  Rng rng(3);
  const std::vector<std::uint32_t> neighbours = {1, 2};
  std::vector<std::uint32_t> peers;
  for (std::uint32_t i = 1; i < 10; ++i) peers.push_back(i);
  watch.reset(neighbours, peers, 10, rng);
  watch.tick(kT, kDead);
  // Nobody ever answers: every tick past the deadline finds the stand-ins
  // silent, retires them and takes others, two at a time at most.
  UnixMs now = kT;
  std::size_t retired = 0;
  for (int round = 0; round < 10; ++round) {
    now += kDead + 1;
    auto changes = watch.tick(now, kDead);
    retired += changes.retired.size();
    CHECK(watch.stand_in_count() <= neighbours.size());
  }
  CHECK(retired > 0);
  // Keepalives: to both dead neighbours (every kDead) and to the stand-ins.
  const auto due = watch.keepalives_due(now + kDead, 10'000, kDead);
  for (std::uint32_t n : neighbours) CHECK(std::find(due.begin(), due.end(), n) != due.end());
  CHECK(due.size() <= 2 * neighbours.size());
}

TEST_CASE("link watch: a failed path is dead at the next tick, and stays dead for the dead window") {
  const Twenty twenty;
  const auto& peers = twenty.peers;
  LinkWatch watch;
  twenty.reset(watch);
  watch.tick(kT, kDead);
  auto hear_everyone = [&](UnixMs at) {
    for (std::uint32_t p : peers) watch.heard(p, at, kDead);
  };
  hear_everyone(kT + 1'000);
  // The transport found the paths to 9 (a neighbour) and to 3 and 4 (not
  // neighbours) failed. Heard a moment later (a stateful firewall lets its
  // frames in): 9 still dies at the next tick, long before the dead window.
  watch.failed(9, kT + 2'000);
  watch.failed(3, kT + 2'000);
  watch.failed(4, kT + 2'000);
  hear_everyone(kT + 2'500);
  auto changes = watch.tick(kT + 3'000, kDead);
  REQUIRE(changes.died == std::vector<std::uint32_t>{9});
  REQUIRE(changes.stand_ins.size() == 1);
  const std::uint32_t stand_in = changes.stand_ins[0].second;
  // Peers that failed lately are not stand-ins.
  CHECK(stand_in != 3);
  CHECK(stand_in != 4);
  CHECK(watch.dead(9));
  // Heard within the dead window of its failure: still dead, still stood in for.
  const LinkWatch::Heard early = watch.heard(9, kT + 10'000, kDead);
  CHECK_FALSE(early.revived);
  CHECK(watch.dead(9));
  CHECK(watch.stand_in(stand_in));
  CHECK(watch.tick(kT + 11'000, kDead).empty());
  // A failed stand-in is retired at the next tick and replaced.
  hear_everyone(kT + 12'000);
  watch.failed(stand_in, kT + 12'500);
  changes = watch.tick(kT + 13'000, kDead);
  CHECK(changes.retired == std::vector<std::uint32_t>{stand_in});
  REQUIRE(changes.stand_ins.size() == 1);
  CHECK(changes.stand_ins[0].first == 9);
  const std::uint32_t second = changes.stand_ins[0].second;
  CHECK(second != stand_in);
  CHECK(watch.stand_in_count() == 1);
  // Past the dead window, a frame from 9 revives it and retires its stand-in.
  const LinkWatch::Heard late = watch.heard(9, kT + 2'000 + kDead + 1, kDead);
  CHECK(late.revived);
  REQUIRE(late.retired.has_value());
  CHECK(*late.retired == second);
  CHECK_FALSE(watch.dead(9));
  // The reports were acted on once: nothing more happens while all are heard.
  hear_everyone(kT + 40'000);
  CHECK(watch.tick(kT + 41'000, kDead).empty());
  // An old report on a peer that was never active does not count against it
  // once the window has passed: 3 and 4 can stand in again.
  watch.failed(2, kT + 42'000);
  changes = watch.tick(kT + 42'500, kDead);
  REQUIRE(changes.stand_ins.size() == 1);
  CHECK_FALSE(watch.dead(changes.stand_ins[0].second));
  CHECK(watch.tick(kT + 43'000, kDead).retired.empty());  // its old flag does not retire it
}

TEST_CASE("link watch: a failed link revives at its first frame once a working path is reported") {
  const Twenty twenty;
  LinkWatch watch;
  twenty.reset(watch);
  watch.tick(kT, kDead);
  watch.failed(9, kT + 1'000);
  auto changes = watch.tick(kT + 2'000, kDead);
  REQUIRE(changes.died == std::vector<std::uint32_t>{9});
  REQUIRE(changes.stand_ins.size() == 1);
  // Its frames alone do not revive it: our path to it failed.
  CHECK_FALSE(watch.heard(9, kT + 3'000, kDead).revived);
  // The transport made a connection to it (or adopted its own): the next
  // frame revives it at once, long before the dead window, and its
  // stand-in retires.
  watch.path_up(9, kT + 4'000);
  const LinkWatch::Heard heard = watch.heard(9, kT + 4'500, kDead);
  CHECK(heard.revived);
  REQUIRE(heard.retired.has_value());
  CHECK(*heard.retired == changes.stand_ins[0].second);
  // A path reported up in the same instant as a new failure keeps it.
  watch.failed(5, kT + 6'000);
  watch.path_up(5, kT + 6'000);
  CHECK(watch.tick(kT + 7'000, kDead).died == std::vector<std::uint32_t>{5});
}

// 10 cores; core 0 is cut from everyone for 3 minutes (longer than a SYNC
// round, shorter than the dead window) while every other core publishes;
// SYNC rounds are made rare so that only the links carry. When the cut
// lifts and the transport reports the paths up, core 0 hears its
// neighbours again, revives them, and both sides catch each other up on
// everything since the cut, in a few ticks.
TEST_CASE("a link back from a cut catches up on everything since it was cut, not one SYNC round") {
  constexpr std::uint32_t kNodes = 10;
  Network net(kNodes, 5, [](CoreConfig& config) { config.sync_interval_ms = 3'600'000; });
  net.report_cuts = true;
  net.load_all(signed_roster(make_roster(1, kNodes)));
  for (std::uint32_t i = 0; i < kNodes; ++i) {
    auto effects = net.cores[i]->publish(signed_report(i, 1, net.now), net.now);
    REQUIRE(effects.ok());
    net.take(i, std::move(effects.value()));
  }
  net.run(20);
  REQUIRE(net.converged());
  net.cut = [](std::uint32_t a, std::uint32_t b) { return a == 0 || b == 0; };
  net.run(static_cast<int>(CoreConfig{}.keepalive_interval_ms / 1'000) + 5);  // every link to 0 failed
  for (std::uint32_t i = 1; i < kNodes; ++i) {
    auto effects = net.cores[i]->publish(signed_report(i, 2, net.now), net.now);
    REQUIRE(effects.ok());
    net.take(i, std::move(effects.value()));
  }
  net.run(90);  // the records are older than a SYNC round by the heal
  net.cut = nullptr;
  for (std::uint32_t i = 1; i < kNodes; ++i) {
    net.cores[0]->on_link_up(server_name(i), net.now);
    net.cores[i]->on_link_up(server_name(0), net.now);
  }
  int ticks = 0;
  bool all = false;
  for (; ticks < 30 && !all; ++ticks) {
    net.step();
    all = true;
    for (std::uint32_t i = 1; i < kNodes; ++i) {
      all = all && net.cores[0]->held_seq(RecordKind::report, server_name(i)) == std::optional<std::uint64_t>(2);
    }
  }
  INFO("ticks after the heal: " << ticks);
  CHECK(all);
  CHECK(ticks <= 8);
  CHECK(net.cores[0]->counters().links_revived >= 1);
  CHECK(net.cores[0]->counters().links_up == kNodes - 1);
}

TEST_CASE("a frame that opens names its sender; one that does not names nobody") {
  Network net(4, 3);
  net.load_all(signed_roster(make_roster(1, 4)));
  net.run(3);
  auto published = net.cores[0]->publish(signed_report(0, 1, net.now), net.now);
  REQUIRE(published.ok());
  Effects out = net.cores[0]->on_tick(net.now + 1'000);  // the push leaves
  REQUIRE_FALSE(out.send.empty());
  const Outgoing& frame = out.send.front();
  GossipCore& receiver = *net.cores[frame.to];
  const Effects in = receiver.on_message(frame.frame, net.now + 1'000);
  REQUIRE(in.sender.has_value());
  CHECK(*in.sender == 0);
  // The same frame again is a replay: it does not open, nobody is named.
  CHECK_FALSE(receiver.on_message(frame.frame, net.now + 1'000).sender.has_value());
  Bytes tampered = frame.frame;
  tampered.back() ^= 1;
  CHECK_FALSE(receiver.on_message(tampered, net.now + 1'000).sender.has_value());
  CHECK_FALSE(receiver.on_message(Bytes{0x01, 0x02}, net.now).sender.has_value());
}

TEST_CASE("a probe that reaches a dead link's host sends it an empty frame at once") {
  Network net(6, 5);
  net.load_all(signed_roster(make_roster(1, 6)));
  net.run(5);
  GossipCore& core = *net.cores[0];
  const std::uint32_t neighbour = core.eager_peers().front();
  const ServerId id = server_name(neighbour);
  CHECK_FALSE(core.on_path_hint(id, net.now));  // alive: nothing to do
  core.on_link_failed(id, net.now);
  (void)core.on_tick(net.now + 1);  // dead now; its keepalive goes out at once
  const Effects quiet = core.on_tick(net.now + 1'001);
  CHECK(std::none_of(quiet.send.begin(), quiet.send.end(), [&](const Outgoing& o) { return o.to == neighbour; }));
  CHECK(core.on_path_hint(id, net.now + 2'000));
  const Effects hinted = core.on_tick(net.now + 2'001);
  CHECK(std::any_of(hinted.send.begin(), hinted.send.end(), [&](const Outgoing& o) { return o.to == neighbour; }));
  CHECK(core.counters().path_hints == 1);
  CHECK_FALSE(core.on_path_hint("no-such-server", net.now));
}

TEST_CASE("a core told that a neighbour's path failed takes a stand-in at its next tick") {
  Network net(6, 5);
  net.load_all(signed_roster(make_roster(1, 6)));
  net.run(5);
  GossipCore& core = *net.cores[0];
  const auto neighbours = core.eager_peers();
  REQUIRE_FALSE(neighbours.empty());
  const ServerId failed = core.roster()->servers[neighbours[0]].id;
  core.on_link_failed(failed, net.now);
  core.on_link_failed("no-such-server", net.now);       // ignored
  core.on_link_failed(core.roster()->servers[0].id, net.now);  // itself: ignored
  CHECK(core.counters().links_failed == 1);
  CHECK(core.counters().links_dead == 0);
  (void)core.on_tick(net.now + 1);
  CHECK(core.counters().links_dead == 1);
  CHECK(core.counters().stand_ins == 1);
}

TEST_CASE("a keepalive is an empty frame; the receiver takes it and answers once") {
  Network net(2, 5);
  net.load_all(signed_roster(make_roster(1, 2)));
  // The first tick starts the clocks; nothing was ever sent: one keepalive each.
  auto first = net.cores[0]->on_tick(net.now);
  REQUIRE(first.send.size() == 1);
  const std::size_t size = first.send[0].frame.size();
  std::printf("overlay repair: a keepalive frame is %zu bytes\n", size);
  CHECK(size <= 64);
  CHECK(net.cores[0]->counters().keepalives_sent == 1);
  // Core 1 had sent nothing either: it answers (at its next tick).
  (void)net.cores[1]->on_message(first.send[0].frame, net.now);
  CHECK(net.cores[1]->counters().frames_malformed == 0);
  CHECK(net.cores[1]->counters().frames_received == 1);
  auto answer = net.cores[1]->on_tick(net.now + 1'000);
  REQUIRE(answer.send.size() == 1);
  (void)net.cores[0]->on_message(answer.send[0].frame, net.now + 1'000);
  // Core 0 sent a frame a second ago: it does not answer the answer.
  CHECK(net.cores[0]->on_tick(net.now + 2'000).send.empty());
}

TEST_CASE("a keepalive is answered by a peer that sent nothing for half the interval") {
  // A peer that keeps no keepalive timer for us (a stand-in that did not take
  // us in) is heard only in answers: had it just sent us something, a full
  // interval would put its next answer nearly two intervals after that.
  Network net(2, 5, [](CoreConfig& config) {
    config.keepalive_interval_ms = 15'000;
    config.sync_interval_ms = 3'600'000;
  });
  net.load_all(signed_roster(make_roster(1, 2)));
  const UnixMs t0 = net.now;
  auto a0 = net.cores[0]->on_tick(t0);
  auto b0 = net.cores[1]->on_tick(t0);
  REQUIRE(a0.send.size() == 1);
  REQUIRE(b0.send.size() == 1);
  (void)net.cores[1]->on_message(a0.send[0].frame, t0);
  (void)net.cores[0]->on_message(b0.send[0].frame, t0);
  // Core 1 sends core 0 a record 7 s later.
  auto published = net.cores[1]->publish(signed_report(1, 1, t0 + 7'000), t0 + 7'000);
  REQUIRE(published.ok());
  auto pushed = net.cores[1]->on_tick(t0 + 7'000);
  for (auto* effects : {&published.value(), &pushed}) {
    for (auto& out : effects->send) (void)net.cores[0]->on_message(out.frame, t0 + 7'000);
  }
  REQUIRE(net.cores[0]->held_seq(RecordKind::report, server_name(1)) == 1U);
  // Core 0 sent nothing since t0: its keepalive at t0 + 15 s. Core 1 sent
  // its last frame 8 s before: it answers.
  auto a1 = net.cores[0]->on_tick(t0 + 15'000);
  REQUIRE(a1.send.size() == 1);
  (void)net.cores[1]->on_message(a1.send[0].frame, t0 + 15'000);
  CHECK(net.cores[1]->on_tick(t0 + 15'000).send.size() == 1);
}

// Ticks until core `to` holds s<origin>'s report `seq`, or -1 after `limit`.
int ticks_until_held(Network& net, std::uint32_t to, std::uint32_t origin, std::uint64_t seq, int limit) {
  for (int tick = 0; tick <= limit; ++tick) {
    if (net.cores[to]->held_seq(RecordKind::report, server_name(origin)).value_or(0) >= seq) return tick;
    net.step();
  }
  return -1;
}

struct CutResult {
  int worst_ticks = 0;  // the slowest of the probe records to reach core 0
  std::uint64_t stand_ins = 0, revived = 0;
};

// 40 cores; at 60 s every link between core 0 and its overlay neighbours is
// cut both ways. Then each of 10 far cores publishes a record in turn: how
// long until core 0 holds it? `repair`: the default config, the lost frames
// reported to their senders as failed paths (as the transport does); or
// repair off (no reports, a dead window longer than the run).
CutResult cut_neighbours(bool repair) {
  constexpr std::uint32_t kNodes = 40;
  Network net(kNodes, 11, [&](CoreConfig& config) {
    if (!repair) config.link_dead_after_ms = 1'000'000'000;
  });
  net.report_cuts = repair;
  net.load_all(signed_roster(make_roster(1, kNodes)));
  for (std::uint32_t i = 0; i < kNodes; ++i) {
    auto effects = net.cores[i]->publish(signed_report(i, 1, net.now), net.now);
    REQUIRE(effects.ok());
    net.take(i, std::move(effects.value()));
  }
  net.run(60);
  PeerSets overlay;
  overlay.reset(make_roster(1, kNodes), 0, CoreConfig{}.overlay_rings);
  const std::vector<std::uint32_t> cut = overlay.neighbours();
  auto is_cut = [&](std::uint32_t a, std::uint32_t b) {
    return (a == 0 && std::count(cut.begin(), cut.end(), b)) || (b == 0 && std::count(cut.begin(), cut.end(), a));
  };
  net.cut = is_cut;
  // Past the keepalive interval: every cut link carried a frame, failed, and
  // repair has acted.
  net.run(static_cast<int>(CoreConfig{}.keepalive_interval_ms / 1'000) + 5);
  CutResult result;
  std::uint64_t seq = 2;
  for (std::uint32_t origin = kNodes - 10; origin < kNodes; ++origin, ++seq) {
    if (is_cut(0, origin)) continue;
    auto effects = net.cores[origin]->publish(signed_report(origin, seq, net.now), net.now);
    REQUIRE(effects.ok());
    net.take(origin, std::move(effects.value()));
    const int ticks = ticks_until_held(net, 0, origin, seq, 120);
    result.worst_ticks = ticks < 0 ? 1'000 : std::max(result.worst_ticks, ticks);
  }
  result.stand_ins = net.cores[0]->counters().stand_ins;
  net.cut = nullptr;  // the block lifts
  // Revival waits a dead window after the last failure reported.
  net.run(static_cast<int>(CoreConfig{}.link_dead_after_ms / 1'000) + 90);
  result.revived = net.cores[0]->counters().links_revived;
  return result;
}

TEST_CASE("a core cut from every overlay neighbour gets records through its stand-ins") {
  const CutResult with = cut_neighbours(true);
  const CutResult without = cut_neighbours(false);
  std::printf("overlay repair: core 0 cut from its neighbours; slowest of 10 records reached it "
              "in %d ticks with repair (%llu stand-ins), %d without (SYNC alone)\n",
              with.worst_ticks, static_cast<unsigned long long>(with.stand_ins), without.worst_ticks);
  CHECK(with.stand_ins >= 1);
  CHECK(with.worst_ticks <= 2 * std::log2(40.0) + 3);  // an IHAVE batch and a GRAFT at most
  CHECK(without.stand_ins == 0);
  CHECK(with.worst_ticks < without.worst_ticks);
  CHECK(with.revived >= 1);  // the neighbours are links again once heard
}

}  // namespace
}  // namespace mesh::gossip
