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
  Fixture f(LinkSpec{300, 20, 10});
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
  CHECK(late > 1'000 / 2);  // 1 - 0.7^3 of frames lose a segment
  CHECK(c.connections_failed == 0);
}

TEST_CASE("loss that never relents fails the connection and drops the frame") {
  Fixture f(LinkSpec{1'000, 20, 0});
  CHECK_FALSE(f.streams->arrival(0, 1, 100, kT0, f.rng).has_value());
  CHECK(f.streams->counters().connections_failed == 1);
  CHECK(f.streams->counters().syn_retries > 0);
}

}  // namespace
}  // namespace mesh::sim
