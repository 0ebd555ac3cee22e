// meshsim's model of gossip over TCP (tools/meshsim/streams.h): a lost
// packet delays a frame instead of losing it, frames of one connection
// arrive in order, a connection is opened by a handshake (again after the
// daemon's idle timeout or a break), and loss that never relents fails it.
#include <doctest/doctest.h>

#include <optional>

#include "node/transport_settings.h"
#include "tools/meshsim/fleet_gen.h"
#include "tools/meshsim/network.h"
#include "tools/meshsim/streams.h"

namespace mesh::sim {
namespace {

struct Fixture {
  explicit Fixture(LinkSpec link) {
    scenario.fleet.generated_nodes = 4;
    scenario.fleet.generated_countries = 2;
    scenario.link_defaults = link;
    auto built = build_world(scenario);
    REQUIRE(built.ok());
    world = std::move(built.value());
    network.emplace(world, scenario);
    streams.emplace(*network);
  }
  Scenario scenario;
  World world;
  std::optional<Network> network;
  std::optional<Streams> streams;
  Rng rng{7};
};

constexpr UnixMs kT0 = 1'000'000;

TEST_CASE("without loss: a handshake first, then one latency per frame") {
  Fixture f(LinkSpec{0, 20, 0});
  // SYN + SYN-ACK (40 ms), then the frame (20 ms).
  CHECK(f.streams->arrival(0, 1, 100, kT0, f.rng) == kT0 + 60);
  CHECK(f.streams->arrival(0, 1, 100, kT0 + 1'000, f.rng) == kT0 + 1'020);
  CHECK(f.streams->counters().handshakes == 1);
  // The other direction is another connection.
  CHECK(f.streams->arrival(1, 0, 100, kT0 + 1'000, f.rng) == kT0 + 1'060);
  CHECK(f.streams->counters().handshakes == 2);
  CHECK(f.streams->counters().retransmissions == 0);
}

TEST_CASE("a connection idle past the daemon's idle timeout, or broken, is opened again") {
  Fixture f(LinkSpec{0, 20, 0});
  const DurationMs idle = node::TransportSettings{}.idle_timeout_ms;
  CHECK(f.streams->arrival(0, 1, 100, kT0, f.rng) == kT0 + 60);
  CHECK(f.streams->arrival(0, 1, 100, kT0 + idle, f.rng) == kT0 + idle + 20);
  CHECK(f.streams->arrival(0, 1, 100, kT0 + 2 * idle + 1, f.rng) == kT0 + 2 * idle + 61);
  CHECK(f.streams->counters().handshakes == 2);
  f.streams->close(0, 1);
  CHECK(f.streams->arrival(0, 1, 100, kT0 + 3 * idle, f.rng) == kT0 + 3 * idle + 60);
  f.streams->close_all(1);
  CHECK(f.streams->arrival(0, 1, 100, kT0 + 3 * idle + 10, f.rng) == kT0 + 3 * idle + 70);
  CHECK(f.streams->counters().handshakes == 4);
}

TEST_CASE("frames sent during a handshake wait for it") {
  Fixture f(LinkSpec{0, 20, 0});
  CHECK(f.streams->arrival(0, 1, 100, kT0, f.rng) == kT0 + 60);
  CHECK(f.streams->arrival(0, 1, 100, kT0 + 10, f.rng) == kT0 + 60);
  CHECK(f.streams->counters().handshakes == 1);
}

TEST_CASE("under loss every frame arrives, late and in order") {
  Fixture f(LinkSpec{100, 20, 10});
  std::uint32_t late = 0;
  UnixMs previous = 0;
  for (int i = 0; i < 2'000; ++i) {
    const UnixMs now = kT0 + i * 100;
    auto at = f.streams->arrival(0, 1, 3'000, now, f.rng);  // 3 segments
    REQUIRE(at.has_value());
    CHECK(*at >= now + 20);
    CHECK(*at >= previous);
    // A retransmission waits at least the minimum RTO (200 ms) on top.
    if (*at - now > 60 + 30) ++late;
    previous = *at;
  }
  const StreamCounters& c = f.streams->counters();
  CHECK(c.retransmissions > 0);
  CHECK(c.frames_delayed + c.frames_held_in_order >= late);
  CHECK(late > 2'000 / 5);  // 1 - 0.9^3 of frames lose a segment
  CHECK(c.connections_failed == 0);
}

TEST_CASE("loss that never relents fails the connection and drops the frame") {
  Fixture f(LinkSpec{1'000, 20, 0});
  const node::TransportSettings daemon;
  CHECK(f.streams->failure_delay(0, 1, kT0) == daemon.connect_timeout_ms);
  CHECK_FALSE(f.streams->arrival(0, 1, 100, kT0, f.rng).has_value());
  CHECK(f.streams->counters().connections_failed == 1);
  CHECK(f.streams->counters().syn_retries > 0);
  // The daemon reports the path failed at its first connect's deadline.
  CHECK(f.streams->failed_at() == kT0 + daemon.connect_timeout_ms);
}

TEST_CASE("a segment unacknowledged for the user timeout fails its connection") {
  // Half the packets lost: a segment is sent again after 250 ms, 500 ms,
  // 1 s, ... and given up once the next try would pass user_timeout_ms.
  Fixture f(LinkSpec{500, 20, 10});
  const node::TransportSettings daemon;
  std::uint32_t failed = 0;
  for (int i = 0; i < 2'000; ++i) {
    const UnixMs now = kT0 + i * 1'000;
    auto at = f.streams->arrival(0, 1, 100, now, f.rng);
    if (at) {
      // Whatever it waited for (a handshake, retransmissions), no single
      // segment waited past the user timeout.
      CHECK(*at - now <= daemon.connect_timeout_ms * 5 + daemon.backoff_max_ms * 5 + daemon.user_timeout_ms);
      continue;
    }
    ++failed;
    CHECK(f.streams->failed_at() > now);
    CHECK(f.streams->failed_at() <= now + daemon.connect_timeout_ms * 5 + daemon.backoff_max_ms * 5 +
                                         daemon.user_timeout_ms);
  }
  CHECK(failed >= 1);
  CHECK(f.streams->counters().connections_failed == failed);
}

TEST_CASE("a failed path is found after the user timeout on an open connection, else the connect timeout") {
  Fixture f(LinkSpec{0, 20, 0});
  const node::TransportSettings daemon;
  CHECK(f.streams->failure_delay(0, 1, kT0) == daemon.connect_timeout_ms);
  REQUIRE(f.streams->arrival(0, 1, 100, kT0, f.rng).has_value());
  CHECK(f.streams->failure_delay(0, 1, kT0 + 1'000) == daemon.user_timeout_ms);
  CHECK(f.streams->failure_delay(1, 0, kT0 + 1'000) == daemon.connect_timeout_ms);  // the other way: none open
  // Past the idle timeout the daemon has closed it: a new connect.
  CHECK(f.streams->failure_delay(0, 1, kT0 + daemon.idle_timeout_ms + 1) == daemon.connect_timeout_ms);
  f.streams->close(0, 1);
  CHECK(f.streams->failure_delay(0, 1, kT0 + 1'000) == daemon.connect_timeout_ms);
}

}  // namespace
}  // namespace mesh::sim
