// The overlay every tree starts from (gossip/peers.h, docs/PROTOCOL.md §4):
// a function of the roster alone, symmetric, of equal degree 2 * rings
// everywhere, connected, with a diameter near log N; and the tree masks
// over a node's links.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <vector>

#include "gossip/peers.h"
#include "tests/gossip/fixture.h"

namespace mesh::gossip {
namespace {

using namespace testing;

std::vector<std::vector<std::uint32_t>> overlay_of(const Roster& roster, std::size_t rings) {
  std::vector<std::vector<std::uint32_t>> links;
  for (std::uint32_t i = 0; i < roster.servers.size(); ++i) {
    PeerSets peers;
    peers.reset(roster, i, rings);
    links.push_back(peers.neighbours());
  }
  return links;
}

// Hops from `from` to every node (breadth-first); -1 where unreachable.
std::vector<int> hops_from(const std::vector<std::vector<std::uint32_t>>& links, std::uint32_t from) {
  std::vector<int> hops(links.size(), -1);
  std::deque<std::uint32_t> queue{from};
  hops[from] = 0;
  while (!queue.empty()) {
    const std::uint32_t at = queue.front();
    queue.pop_front();
    for (std::uint32_t next : links[at]) {
      if (hops[next] >= 0) continue;
      hops[next] = hops[at] + 1;
      queue.push_back(next);
    }
  }
  return hops;
}

TEST_CASE("overlay: symmetric, degree 2 * rings, connected, diameter near log N") {
  for (std::uint32_t n : {5u, 60u, 400u}) {
    for (std::size_t rings : {1u, 2u, 3u}) {
      CAPTURE(n);
      CAPTURE(rings);
      const auto links = overlay_of(make_roster(1, n), rings);
      std::size_t degree_sum = 0;
      for (std::uint32_t a = 0; a < n; ++a) {
        CHECK(links[a].size() <= 2 * rings);
        CHECK(std::find(links[a].begin(), links[a].end(), a) == links[a].end());
        degree_sum += links[a].size();
        for (std::uint32_t b : links[a]) {
          // Both ends know every link, with no handshake.
          CHECK(std::find(links[b].begin(), links[b].end(), a) != links[b].end());
        }
      }
      // Rings rarely share an edge (about rings·(rings − 1) shared edges, whatever N):
      // the mean degree stays close to 2 * rings.
      if (n >= 60) CHECK(static_cast<double>(degree_sum) / n >= 2.0 * rings - 0.5);
      int diameter = 0;
      for (std::uint32_t from = 0; from < n; from += std::max(1u, n / 20)) {
        for (int hops : hops_from(links, from)) {
          REQUIRE(hops >= 0);  // connected
          diameter = std::max(diameter, hops);
        }
      }
      if (rings >= 2 && n >= 60) CHECK(diameter <= 2 * std::log2(n));
    }
  }
}

TEST_CASE("overlay: the same roster gives the same links whatever the order of its servers") {
  Roster roster = make_roster(1, 50);
  Roster reversed = roster;
  std::reverse(reversed.servers.begin(), reversed.servers.end());
  const auto a = overlay_of(roster, 2);
  const auto b = overlay_of(reversed, 2);
  for (std::uint32_t i = 0; i < 50; ++i) {
    // Index i of `roster` is index 49 - i of `reversed`.
    std::vector<std::uint32_t> mapped;
    for (std::uint32_t peer : b[49 - i]) mapped.push_back(49 - peer);
    std::sort(mapped.begin(), mapped.end());
    CHECK(mapped == a[i]);
  }
}

TEST_CASE("trees: masks over the links; a peer outside them joins as a link") {
  PeerSets peers;
  peers.reset(make_roster(1, 60), 0, 2);
  const std::vector<std::uint32_t> neighbours = peers.neighbours();
  REQUIRE(neighbours.size() == 4);
  const std::size_t slot = peers.slot_of(RecordKind::report, 7);
  CHECK(peers.eager(slot) == neighbours);  // every tree starts as the overlay
  peers.make_lazy(slot, neighbours[1]);
  CHECK_FALSE(peers.is_eager(slot, neighbours[1]));
  std::vector<std::uint32_t> lazy;
  peers.for_each_lazy_neighbour(slot, [&](std::uint32_t peer) { lazy.push_back(peer); });
  CHECK(lazy == std::vector<std::uint32_t>{neighbours[1]});
  // Other trees are untouched.
  CHECK(peers.eager(peers.slot_of(RecordKind::report, 8)) == neighbours);
  // A non-neighbour pushed to us: it becomes a link and joins this tree only.
  std::uint32_t stranger = 1;
  while (std::find(neighbours.begin(), neighbours.end(), stranger) != neighbours.end()) ++stranger;
  CHECK(peers.make_eager(slot, stranger));
  CHECK(peers.is_eager(slot, stranger));
  CHECK_FALSE(peers.is_eager(peers.slot_of(RecordKind::report, 8), stranger));
  // Lazy neighbours are overlay neighbours only: the extra link never gets IHAVE.
  peers.make_lazy(slot, stranger);
  lazy.clear();
  peers.for_each_lazy_neighbour(slot, [&](std::uint32_t peer) { lazy.push_back(peer); });
  CHECK(lazy == std::vector<std::uint32_t>{neighbours[1]});
}

TEST_CASE("trees: at most kLinksMax links; past them a tree refuses a new peer") {
  PeerSets peers;
  peers.reset(make_roster(1, 200), 0, 1);
  const std::size_t slot = peers.slot_of(RecordKind::report, 3);
  std::size_t added = peers.neighbours().size();
  for (std::uint32_t peer = 1; peer < 200 && added < PeerSets::kLinksMax; ++peer) {
    if (!peers.is_eager(slot, peer) && peers.make_eager(slot, peer)) ++added;
  }
  REQUIRE(added == PeerSets::kLinksMax);
  std::uint32_t spare = 1;
  while (peers.is_eager(slot, spare)) ++spare;
  CHECK_FALSE(peers.make_eager(slot, spare));
  CHECK(peers.eager(slot).size() == PeerSets::kLinksMax);
  // A link that left every tree (and was never active) frees its slot: the
  // spare peer takes it, and the overlay neighbours keep theirs.
  const std::vector<std::uint32_t> eager = peers.eager(slot);
  std::uint32_t idle = 0;
  for (std::uint32_t peer : eager) {
    const auto& n = peers.neighbours();
    if (std::find(n.begin(), n.end(), peer) == n.end()) idle = peer;
  }
  REQUIRE(idle != 0);
  peers.make_lazy(slot, idle);
  CHECK(peers.make_eager(slot, spare));
  CHECK(peers.is_eager(slot, spare));
  CHECK_FALSE(peers.is_eager(slot, idle));
  for (std::uint32_t n : peers.neighbours()) CHECK(peers.is_eager(slot, n));
  // Active links are kept too: an active stand-in's slot is never taken.
  CHECK(peers.set_active(spare, true));
  peers.make_lazy(slot, spare);
  CHECK_FALSE(peers.make_eager(slot, idle));  // the only idle-able slot is spare's, and it is active
}

}  // namespace
}  // namespace mesh::gossip
