// Which connections the API keeps when it is full (node/api/admission.h):
// the rules as a table of admissions, trusts, waits and closes, no socket.
#include <doctest/doctest.h>

#include <vector>

#include "node/api/admission.h"

namespace mesh::api {
namespace {

using Outcome = AdmitDecision::Outcome;

SourceAddress ip(std::uint8_t a, std::uint8_t b, std::uint8_t c, std::uint8_t d) {
  return SourceAddress::v4((std::uint32_t{a} << 24) | (std::uint32_t{b} << 16) | (std::uint32_t{c} << 8) | d);
}

// Fills the table with `count` connections from `from`; their ids.
std::vector<ConnectionId> fill(Admission& admission, const SourceAddress& from, int count) {
  std::vector<ConnectionId> ids;
  for (int i = 0; i < count; ++i) {
    const AdmitDecision decision = admission.admit(from);
    REQUIRE(decision.admitted());
    REQUIRE(!decision.evict);
    ids.push_back(decision.id);
  }
  return ids;
}

TEST_CASE("an address holds at most per_address_max connections, trusted ones included") {
  Admission admission({10, 2});
  const auto ids = fill(admission, ip(127, 0, 1, 1), 2);
  CHECK(admission.admit(ip(127, 0, 1, 1)).outcome == Outcome::address_full);
  admission.trust(ids[0]);
  CHECK(admission.admit(ip(127, 0, 1, 1)).outcome == Outcome::address_full);
  CHECK(admission.admit(ip(127, 0, 1, 2)).admitted());  // another address of the same network
  admission.close(ids[1]);
  CHECK(admission.admit(ip(127, 0, 1, 1)).admitted());
  CHECK(admission.open() == 3);
}

TEST_CASE("when full, a newcomer from a quieter network takes the place of the flood's longest waiter") {
  Admission admission({4, 4});
  const auto flood = fill(admission, ip(10, 0, 1, 1), 2);
  const auto more = fill(admission, ip(10, 0, 1, 2), 2);
  const AdmitDecision poller = admission.admit(ip(127, 0, 0, 2));
  REQUIRE(poller.admitted());
  CHECK(poller.evict == flood[0]);  // the network's greediest addresses tie: the longest waiter goes
  CHECK(admission.open() == 4);
  (void)more;
  // The flood cannot take it back, nor push out its own to come back.
  CHECK(admission.admit(ip(10, 0, 1, 1)).outcome == Outcome::server_full);
  CHECK(admission.admit(ip(10, 0, 1, 2)).outcome == Outcome::server_full);
  CHECK(admission.open() == 4);
}

TEST_CASE("a trusted connection is never evicted; with only trusted ones the newcomer is refused") {
  Admission admission({2, 4});
  const auto ids = fill(admission, ip(10, 0, 0, 1), 2);
  admission.trust(ids[0]);
  admission.trust(ids[1]);
  CHECK(admission.trusted() == 2);
  CHECK(admission.admit(ip(192, 168, 0, 1)).outcome == Outcome::server_full);
  admission.close(ids[0]);
  CHECK(admission.trusted() == 1);
  CHECK(admission.admit(ip(192, 168, 0, 1)).admitted());
}

TEST_CASE("in the flood's own network, an address without untrusted connections gets a place") {
  Admission admission({6, 6});
  const auto first = fill(admission, ip(127, 0, 0, 3), 3);
  fill(admission, ip(127, 0, 0, 4), 3);
  const AdmitDecision poller = admission.admit(ip(127, 0, 0, 2));
  REQUIRE(poller.admitted());
  CHECK(poller.evict == first[0]);
  // The flood's addresses now hold 2 and 3: one more than another would
  // only swap them, so neither pushes out anyone, the poller least.
  CHECK(admission.admit(ip(127, 0, 0, 3)).outcome == Outcome::server_full);
  CHECK(admission.admit(ip(127, 0, 0, 4)).outcome == Outcome::server_full);
  // An address two short of the greediest does get a place.
  admission.close(poller.id);
  CHECK(admission.admit(ip(127, 0, 0, 3)).admitted());  // a free place: .3 holds 3 again
  const AdmitDecision lone = admission.admit(ip(127, 0, 0, 5));
  REQUIRE(lone.evict.has_value());
  // .3 now holds 2, .4 holds 3, .5 one: .5 may take one of .4's (two more
  // than its own), and then no more (2, 2, 2).
  CHECK(admission.admit(ip(127, 0, 0, 5)).admitted());
  CHECK(admission.admit(ip(127, 0, 0, 5)).outcome == Outcome::server_full);
}

TEST_CASE("between networks, the greedier network gives way when it holds two more") {
  Admission admission({5, 5});
  fill(admission, ip(10, 0, 1, 1), 3);
  fill(admission, ip(10, 0, 2, 1), 2);
  // 10.0.2/24 holds 2 against 3: one more would only swap them.
  CHECK(admission.admit(ip(10, 0, 2, 1)).outcome == Outcome::server_full);
  CHECK(admission.admit(ip(10, 0, 2, 2)).admitted());  // an address with none always gets a place
  // Now 10.0.1/24 holds 2 and 10.0.2/24 3; an address of 10.0.1/24 with
  // connections cannot push out 10.0.2/24's.
  CHECK(admission.admit(ip(10, 0, 1, 1)).outcome == Outcome::server_full);
}

TEST_CASE("a flood does not churn its own connections: a newcomer as greedy as the greediest is refused") {
  Admission admission({4, 4});
  fill(admission, ip(10, 0, 0, 1), 2);
  fill(admission, ip(10, 0, 0, 2), 2);
  CHECK(admission.admit(ip(10, 0, 0, 1)).outcome == Outcome::server_full);
  CHECK(admission.admit(ip(10, 0, 0, 2)).outcome == Outcome::server_full);
  // A third address of the same network holds none: it may take a place.
  CHECK(admission.admit(ip(10, 0, 0, 3)).admitted());
  // ... and then, holding one against two, it may not take another.
  CHECK(admission.admit(ip(10, 0, 0, 3)).outcome == Outcome::server_full);
}

TEST_CASE("the longest waiter goes first; a connection that was answered waits anew") {
  Admission admission({3, 3});
  const auto ids = fill(admission, ip(10, 0, 0, 1), 3);
  admission.waiting(ids[0]);  // answered, now waits for its next request: the newest waiter
  const AdmitDecision first = admission.admit(ip(10, 9, 9, 9));
  CHECK(first.evict == ids[1]);
  const AdmitDecision second = admission.admit(ip(10, 9, 9, 8));
  CHECK(second.evict == ids[2]);
}

TEST_CASE("close is idempotent, and an evicted connection's close changes nothing") {
  Admission admission({1, 1});
  const auto ids = fill(admission, ip(10, 0, 0, 1), 1);
  const AdmitDecision newcomer = admission.admit(ip(10, 0, 1, 1));
  REQUIRE(newcomer.evict == ids[0]);
  admission.close(ids[0]);  // the evicted session's own close, later
  admission.close(ids[0]);
  CHECK(admission.open() == 1);
  admission.trust(ids[0]);  // unknown: ignored
  admission.waiting(ids[0]);
  CHECK(admission.trusted() == 0);
}

TEST_CASE("IPv6 addresses are grouped by their /64, IPv4 by their /24") {
  std::array<std::uint8_t, 16> a{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1};
  auto b = a;
  b[15] = 7;
  auto c = a;
  c[7] = 2;
  CHECK(SourceAddress::v6(a).network() == SourceAddress::v6(b).network());
  CHECK(SourceAddress::v6(a).network() != SourceAddress::v6(c).network());
  CHECK(!SourceAddress::v6(a).is_v4());
  CHECK(ip(10, 1, 2, 3).is_v4());
  CHECK(ip(10, 1, 2, 3).network() == ip(10, 1, 2, 200).network());
  CHECK(ip(10, 1, 2, 3).network() != ip(10, 1, 3, 3).network());
}

}  // namespace
}  // namespace mesh::api
