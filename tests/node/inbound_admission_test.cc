// Which accepted connections the transport keeps (node/inbound_admission.h):
// the rules as plain values in, decisions out.
#include "node/inbound_admission.h"

#include <doctest/doctest.h>

using namespace mesh::node;
using Outcome = InboundDecision::Outcome;

namespace {

InboundSource host(std::uint32_t last_octet) { return inbound_source_v4(0x0a000000u | last_octet); }

}  // namespace

TEST_CASE("sources: an IPv4 host, an IPv6 /64, an IPv4-mapped IPv6 address is the IPv4 host") {
  CHECK(host(1) != host(2));
  std::array<std::uint8_t, 16> a{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1};
  std::array<std::uint8_t, 16> b = a;
  b[15] = 0x99;  // same /64
  std::array<std::uint8_t, 16> c = a;
  c[7] = 2;  // another /64
  CHECK(inbound_source_v6(a) == inbound_source_v6(b));
  CHECK(inbound_source_v6(a) != inbound_source_v6(c));
  std::array<std::uint8_t, 16> mapped{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 7};
  CHECK(inbound_source_v6(mapped) == host(7));
}

TEST_CASE("a source beyond its share replaces its own oldest silent connection, then its oldest heard one") {
  InboundAdmission admission({.connections_max = 100, .unauthenticated_per_source_max = 3});
  for (std::uint64_t id = 1; id <= 3; ++id) CHECK(admission.admit(id, host(1)).outcome == Outcome::admitted);
  admission.heard(1);  // 1 heard, 2 and 3 silent
  auto decision = admission.admit(4, host(1));
  CHECK(decision.outcome == Outcome::admitted_source_full);
  CHECK(decision.evict == std::optional<std::uint64_t>(2));
  decision = admission.admit(5, host(1));
  CHECK(decision.evict == std::optional<std::uint64_t>(3));
  admission.heard(4);
  admission.heard(5);
  decision = admission.admit(6, host(1));
  CHECK(decision.evict == std::optional<std::uint64_t>(1));  // all heard: the first heard
  CHECK(admission.open() == 3);

  // Another source is not touched by the first one's share.
  CHECK(admission.admit(7, host(2)).outcome == Outcome::admitted);
  CHECK_FALSE(admission.admit(7 + 1, host(2)).evict.has_value());
  CHECK(admission.open() == 5);
}

TEST_CASE("an authenticated connection is never given up; a full table of them refuses") {
  InboundAdmission admission({.connections_max = 3, .unauthenticated_per_source_max = 8});
  CHECK(admission.admit(1, host(1)).admitted());
  CHECK(admission.admit(2, host(2)).admitted());
  admission.heard(1);
  admission.authenticated(1);
  admission.heard(2);
  admission.authenticated(2);
  CHECK(admission.admit(3, host(9)).outcome == Outcome::admitted);
  // Full: the newcomer takes the unauthenticated one's place, from any source.
  auto decision = admission.admit(4, host(8));
  CHECK(decision.outcome == Outcome::admitted_table_full);
  CHECK(decision.evict == std::optional<std::uint64_t>(3));
  admission.heard(4);
  admission.authenticated(4);
  CHECK(admission.authenticated_count() == 3);
  CHECK(admission.unauthenticated_count() == 0);
  decision = admission.admit(5, host(9));
  CHECK(decision.outcome == Outcome::refused);
  CHECK_FALSE(decision.evict.has_value());
  CHECK(admission.open() == 3);

  // A closed member frees its place.
  admission.closed(2);
  admission.closed(2);   // idempotent
  admission.closed(77);  // unknown
  CHECK(admission.admit(6, host(9)).outcome == Outcome::admitted);
  CHECK(admission.open() == 3);
}

TEST_CASE("a full table gives up the oldest silent connection before any heard one, whatever the source") {
  InboundAdmission admission({.connections_max = 4, .unauthenticated_per_source_max = 8});
  CHECK(admission.admit(1, host(1)).admitted());
  CHECK(admission.admit(2, host(2)).admitted());
  CHECK(admission.admit(3, host(3)).admitted());
  CHECK(admission.admit(4, host(4)).admitted());
  admission.heard(1);
  admission.heard(3);
  auto decision = admission.admit(5, host(5));
  CHECK(decision.evict == std::optional<std::uint64_t>(2));
  decision = admission.admit(6, host(6));
  CHECK(decision.evict == std::optional<std::uint64_t>(4));
  decision = admission.admit(7, host(7));
  CHECK(decision.evict == std::optional<std::uint64_t>(5));  // 5 is silent, older than 6
  admission.heard(6);
  admission.heard(7);
  decision = admission.admit(8, host(8));
  CHECK(decision.evict == std::optional<std::uint64_t>(1));  // all heard: the first heard
}

TEST_CASE("a full table gives up a connection of the source that holds the most, however old the others") {
  InboundAdmission admission({.connections_max = 5, .unauthenticated_per_source_max = 8});
  CHECK(admission.admit(1, host(1)).admitted());  // the oldest, silent, alone at its source
  CHECK(admission.admit(2, host(2)).admitted());
  CHECK(admission.admit(3, host(3)).admitted());
  CHECK(admission.admit(4, host(3)).admitted());
  CHECK(admission.admit(5, host(3)).admitted());
  admission.heard(3);
  auto decision = admission.admit(6, host(4));
  CHECK(decision.outcome == Outcome::admitted_table_full);
  CHECK(decision.evict == std::optional<std::uint64_t>(4));  // host 3's first silent one
  decision = admission.admit(7, host(5));
  CHECK(decision.evict == std::optional<std::uint64_t>(5));
  decision = admission.admit(8, host(6));
  CHECK(decision.evict == std::optional<std::uint64_t>(1));  // all hold one now: the first silent
  admission.closed(3);
  CHECK(admission.unauthenticated_count() == 4);
  CHECK(admission.admit(9, host(2)).outcome == Outcome::admitted);
  decision = admission.admit(10, host(7));
  CHECK(decision.evict == std::optional<std::uint64_t>(2));  // host 2 holds two
  CHECK(admission.unauthenticated_count() == 5);
}

// The sanitized fleet suite's finding (tests/node/fleet_hostile_test.cc): a
// flood from 200 sources churned a full table in a third of a second, and a
// restarting member, slower than that to send its first frame, lost its
// place as the oldest silent connection, again and again.
TEST_CASE("a member's lone silent connection keeps its place while a flood from 200 sources churns") {
  InboundAdmission admission({.connections_max = 512, .unauthenticated_per_source_max = 8});
  std::uint64_t id = 0;
  for (int i = 0; i < 600; ++i) CHECK(admission.admit(++id, host(1000 + i % 200)).admitted());
  const std::uint64_t member = ++id;
  REQUIRE(admission.admit(member, host(3)).admitted());
  int evicted = 0;
  for (int i = 0; i < 100'000; ++i) {
    const auto decision = admission.admit(++id, host(1000 + i % 200));
    REQUIRE(decision.admitted());
    REQUIRE(decision.evict != std::optional<std::uint64_t>(member));
    evicted += decision.evict.has_value() ? 1 : 0;
  }
  CHECK(evicted == 100'000);
  CHECK(admission.open() == 512);
  admission.heard(member);
  admission.authenticated(member);
  CHECK(admission.authenticated_count() == 1);
  CHECK(admission.unauthenticated_count() == 511);
}

TEST_CASE("a flood of 2000 from one source holds its share, and members keep coming in") {
  InboundAdmission admission({.connections_max = 512, .unauthenticated_per_source_max = 8});
  std::uint64_t id = 0;
  for (int i = 0; i < 2000; ++i) CHECK(admission.admit(++id, host(5000)).admitted());
  CHECK(admission.open() == 8);
  for (std::uint32_t member = 1; member <= 200; ++member) {
    const auto decision = admission.admit(++id, host(member));
    REQUIRE(decision.outcome == Outcome::admitted);
    admission.heard(id);
    admission.authenticated(id);
  }
  CHECK(admission.authenticated_count() == 200);
  CHECK(admission.unauthenticated_count() == 8);
}

TEST_CASE("a flood from many sources fills the table; each member still evicts one of them") {
  InboundAdmission admission({.connections_max = 64, .unauthenticated_per_source_max = 8});
  std::uint64_t id = 0;
  for (int i = 0; i < 2000; ++i) CHECK(admission.admit(++id, host(1000 + i % 250)).admitted());
  CHECK(admission.open() == 64);
  for (std::uint32_t member = 1; member <= 60; ++member) {
    const auto decision = admission.admit(++id, host(member));
    REQUIRE(decision.admitted());
    REQUIRE(decision.evict.has_value());
    admission.heard(id);
    admission.authenticated(id);
  }
  CHECK(admission.authenticated_count() == 60);
  CHECK(admission.unauthenticated_count() == 4);
}
