// Several real meshnode processes on loopback, each with a real TLS
// listener and a stand-in VPN service (tests/node/daemon_fleet.h): what
// the daemons compute, read from their stores as meshctl reads them.
// Short intervals come from the roster; every wait is bounded polling on an
// outcome, never a sleep for a guessed time.
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <map>

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

// Every record a node holds, by origin: (seq, bytes).
std::map<std::string, std::pair<std::uint64_t, Bytes>> by_origin(const DaemonFleet& fleet,
                                                                 std::uint32_t i) {
  std::map<std::string, std::pair<std::uint64_t, Bytes>> held;
  for (const Bytes& raw : fleet.records(i)) {
    if (auto envelope = decode_envelope(raw)) held[envelope->origin] = {envelope->seq, raw};
  }
  return held;
}

// Reports keep coming, so at an arbitrary instant some record is in flight
// and the stores differ by it. What holds in steady state: every node holds
// every origin's record at least as new as any node held a moment ago, and
// wherever two nodes hold the same seq they hold the same bytes. Together:
// one record set, one digest, everywhere, once the flight lands.
bool converges(const DaemonFleet& fleet, std::chrono::seconds limit) {
  std::map<std::string, std::uint64_t> newest;
  for (std::uint32_t i = 0; i < fleet.size(); ++i) {
    for (const auto& [origin, record] : by_origin(fleet, i)) {
      newest[origin] = std::max(newest[origin], record.first);
    }
  }
  if (newest.size() != fleet.size() + 1) return false;  // the roster and one report each
  return DaemonFleet::wait([&] {
    std::map<std::pair<std::string, std::uint64_t>, Bytes> seen;
    for (std::uint32_t i = 0; i < fleet.size(); ++i) {
      const auto held = by_origin(fleet, i);
      for (const auto& [origin, seq] : newest) {
        auto it = held.find(origin);
        if (it == held.end() || it->second.first < seq) return false;
      }
      for (const auto& [origin, record] : held) {
        auto [at, fresh] = seen.try_emplace({origin, record.first}, record.second);
        if (!fresh && at->second != record.second) return false;
      }
    }
    return true;
  }, limit);
}

TEST_CASE("real daemons: steady state, then a stopped listener, service and daemon, each healing") {
  DaemonFleet fleet(4, 41);
  fleet.start_all();
  INFO("logs in " << fleet.dir());
  REQUIRE(DaemonFleet::wait([&] { return every_server_ok(fleet, fleet.everyone()); }, seconds(60)));
  for (int round = 0; round < 3; ++round) CHECK(converges(fleet, seconds(20)));

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
    // A larger boot (the held one + 1, or the seconds since 2026-01-01 when
    // larger: docs/STORAGE.md, "Boot counter"), from the store it left.
    const std::uint64_t next_boot = big_endian(*fleet.state(2, kBootCounterKey));
    CHECK(next_boot > big_endian(*boot));
    CHECK(own_seq(fleet, 2) > seq);  // numbering goes on from the stored report
    CHECK(fleet.log_text(2).find("boot " + std::to_string(next_boot) + ", 5 records") != std::string::npos);
  }
}

// A node whose data dir was lost (a reinstall, a new disk) comes back with
// its key and a fresh store. Its boot counter, the prefix of its link
// nonces, must not start again below the one its peers hold: they would
// drop its frames as replays of an older boot (and the nonces would repeat
// under the same key). docs/STORAGE.md, "Boot counter".
TEST_CASE("a node restarted with its key and an empty data dir is heard at once") {
  DaemonFleet fleet(3, 49);
  fleet.start_all();
  INFO("logs in " << fleet.dir());
  REQUIRE(DaemonFleet::wait([&] { return fleet.all_show(fleet.everyone(), "n3", "ok"); }, seconds(60)));
  // The boot counter n3's store holds (its latest start's).
  auto last_boot = [&] {
    const std::optional<Bytes> held = fleet.state(2, kBootCounterKey);
    std::uint64_t boot = 0;
    if (held && held->size() == 8) {
      for (std::uint8_t b : *held) boot = boot << 8 | b;
    }
    return boot;
  };
  std::uint64_t boot = last_boot();
  REQUIRE(boot > 0);
  for (int restart = 0; restart < 2; ++restart) {  // killed and restarted on its store
    fleet.kill_daemon(2);
    fleet.start_daemon(2);
    REQUIRE(DaemonFleet::wait([&] { return last_boot() > boot; }, seconds(10)));
    boot = last_boot();
  }
  fleet.kill_daemon(2);
  REQUIRE(DaemonFleet::wait([&] { return fleet.all_show({0, 1}, "n3", "no_data"); }, seconds(30)));
  std::filesystem::remove_all(fleet.data_dir(2));
  std::filesystem::create_directory(fleet.data_dir(2));
  std::filesystem::permissions(fleet.data_dir(2), std::filesystem::perms::owner_all);
  fleet.start_daemon(2);
  // Its first boot on the fresh store is above its last on the old one
  // (it was 1 before the floor), and the fleet hears it.
  CHECK(DaemonFleet::wait([&] { return last_boot() > boot; }, seconds(10)));
  CHECK(DaemonFleet::wait([&] { return fleet.all_show(fleet.everyone(), "n3", "ok"); }, seconds(20)));
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
