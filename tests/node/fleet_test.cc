// Several real meshnode processes on loopback, each with a real TLS
// listener and a stand-in VPN service (tests/node/daemon_fleet.h): what
// the daemons compute, read from their stores as meshctl reads them.
// Short intervals come from the roster; every wait is bounded polling on an
// outcome, never a sleep for a guessed time.
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <algorithm>
#include <csignal>

#include "node/agent/state_codec.h"
#include "storage/layout.h"
#include "tests/node/daemon_fleet.h"
#include "tests/node/net_util.h"

namespace mesh::test {
namespace {

using std::chrono::seconds;

std::uint64_t big_endian(const Bytes& bytes) {
  std::uint64_t value = 0;
  for (std::uint8_t b : bytes) value = value << 8 | b;
  return value;
}

std::uint64_t own_seq(const DaemonFleet& fleet, std::uint32_t i) {
  for (const Bytes& raw : fleet.records(i)) {
    auto envelope = decode_envelope(raw);
    if (envelope && envelope->kind == RecordKind::report && envelope->origin == fleet.id(i)) {
      return envelope->seq;
    }
  }
  return 0;
}

bool every_server_ok(const DaemonFleet& fleet, const std::vector<std::uint32_t>& nodes) {
  for (std::uint32_t i = 0; i < fleet.size(); ++i) {
    if (!fleet.all_show(nodes, fleet.id(i), "ok")) return false;
  }
  return true;
}

bool one_record_set(const DaemonFleet& fleet) {
  const auto first = fleet.records(0);
  if (first.size() != fleet.size() + 1) return false;  // the roster and one report each
  for (std::uint32_t i = 1; i < fleet.size(); ++i) {
    if (fleet.records(i) != first) return false;
  }
  return true;
}

TEST_CASE("real daemons: steady state, then a stopped listener, service and daemon, each healing") {
  DaemonFleet fleet(4, 41);
  fleet.start_all();
  INFO("logs in " << fleet.dir());
  REQUIRE(DaemonFleet::wait([&] { return every_server_ok(fleet, fleet.everyone()); }, seconds(60)));
  // Reports keep coming, but between two of them every store holds the very
  // same record set: the same digest everywhere.
  CHECK(DaemonFleet::wait([&] { return one_record_set(fleet); }, seconds(30)));

  SUBCASE("the traffic listener stops: unavailable everywhere, out of rotation, back by itself") {
    fleet.stop_listener(1);
    CHECK(DaemonFleet::wait([&] { return fleet.all_show(fleet.everyone(), "n2", "unavailable"); },
                            seconds(40)));
    const auto first = fleet.rotation(0, "first");
    CHECK(first == std::vector<ServerId>{"n1", "n3"});
    fleet.start_listener(1);
    CHECK(DaemonFleet::wait([&] { return fleet.all_show(fleet.everyone(), "n2", "ok"); }, seconds(40)));
  }
  SUBCASE("the VPN service stops: unavailable, and the reason is in the daemon's log") {
    fleet.stop_service(3);
    CHECK(DaemonFleet::wait([&] { return fleet.all_show(fleet.everyone(), "n4", "unavailable"); },
                            seconds(40)));
    CHECK(fleet.log_text(3).find("service process:vpn-t41-n4: not running") != std::string::npos);
    CHECK(fleet.log_text(0).find("n4: ok -> unavailable") != std::string::npos);
    fleet.start_service(3);
    CHECK(DaemonFleet::wait([&] { return fleet.all_show(fleet.everyone(), "n4", "ok"); }, seconds(40)));
  }
  SUBCASE("a daemon stops: no_data, still in rotation; restarted, it resumes from its store") {
    const std::uint64_t seq = own_seq(fleet, 2);
    const auto boot = fleet.state(2, kBootCounterKey);
    REQUIRE(boot.has_value());
    const auto status = fleet.stop_daemon(2, std::chrono::milliseconds(2'000));  // exits within 2 s
    REQUIRE(status.has_value());
    CHECK(WIFEXITED(*status));
    CHECK(WEXITSTATUS(*status) == 0);
    // Its streaks were flushed at shutdown: one stored per target.
    bool streaks = false;
    for (std::uint32_t t = 0; t < fleet.size(); ++t) {
      if (t != 2) streaks = streaks || fleet.state(2, agent::streak_key(fleet.id(t))).has_value();
    }
    CHECK(streaks);
    CHECK(DaemonFleet::wait([&] { return fleet.all_show(fleet.all_but(2), "n3", "no_data"); },
                            seconds(40)));
    // Silence removes nothing.
    CHECK(fleet.rotation(0, "first") == std::vector<ServerId>{"n1", "n2", "n3"});
    fleet.start_daemon(2);
    CHECK(DaemonFleet::wait([&] { return fleet.all_show(fleet.all_but(2), "n3", "ok"); }, seconds(40)));
    CHECK(big_endian(*fleet.state(2, kBootCounterKey)) == big_endian(*boot) + 1);
    CHECK(own_seq(fleet, 2) > seq);  // numbering goes on from the stored report
    CHECK(fleet.log_text(2).find("boot 2, 5 records") != std::string::npos);
  }
}

TEST_CASE("a newer roster file read on SIGHUP at one node reaches every node by gossip") {
  DaemonFleet fleet(3, 42);
  fleet.start_all();
  INFO("logs in " << fleet.dir());
  REQUIRE(DaemonFleet::wait([&] { return every_server_ok(fleet, fleet.everyone()); }, seconds(60)));
  Roster next = fleet.roster();
  next.version = 2;
  next.routes.push_back(Route{"spare", "Spare"});
  fleet.write_roster(next);
  fleet.signal_daemon(0, SIGHUP);
  CHECK(DaemonFleet::wait([&] {
    for (std::uint32_t i = 0; i < fleet.size(); ++i) {
      if (fleet.roster_version_held(i) != 2) return false;
    }
    return true;
  }, seconds(40)));
  CHECK(fleet.log_text(0).find("SIGHUP") != std::string::npos);
  CHECK(fleet.log_text(2).find("roster version 2 accepted") != std::string::npos);
}

}  // namespace
}  // namespace mesh::test
