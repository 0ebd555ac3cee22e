// node/transport.h: a connection the peer opened, once adopted (it carried
// the peer's sealed frame: here the test plays the daemon and adopts it),
// carries our frames to that peer too. A pair settles on the connection the
// smaller id opened, a peer only its own connections reach is still
// reached, and the path is reported up when a connection is made or adopted.
#include <doctest/doctest.h>

#include <algorithm>

#include "tests/node/transport_fixture.h"

using namespace mesh;
using namespace mesh::node;
using namespace mesh::node::test;

namespace {

TransportSettings settings_of(const ServerId& self) {
  TransportSettings settings = test_settings();
  settings.self = self;
  return settings;
}

// The daemon's part: adopts every accepted connection a frame came on, as
// if the gossip core had opened that frame as `peer`'s.
void adopt_all(TestNode& node, const ServerId& peer, const Endpoint& peer_address) {
  for (InboundId inbound : node.inbound_ids) {
    if (inbound != 0) node.transport.adopt(inbound, peer, peer_address);
  }
}

std::size_t count_of(const std::vector<ServerId>& ids, const ServerId& id) {
  return static_cast<std::size_t>(std::count(ids.begin(), ids.end(), id));
}

}  // namespace

TEST_CASE("an adopted connection carries frames back: one connection for the pair") {
  boost::asio::io_context io;
  TestNode a(io, settings_of("a"), 1);
  TestNode b(io, settings_of("b"), 2);
  a.start();
  b.start();

  a.transport.send("b", b.address, test_frame(0));
  REQUIRE(run_until(io, [&] { return b.received.size() == 1; }));
  REQUIRE(b.inbound_ids.size() == 1);
  CHECK(b.inbound_ids[0] != 0);  // an accepted connection, not adopted yet
  CHECK(count_of(a.up_paths, "b") == 1);  // a's connection was made
  adopt_all(b, "a", a.address);
  REQUIRE(run_until(io, [&] { return count_of(b.up_paths, "a") == 1; }));

  for (std::uint32_t i = 0; i < 50; ++i) b.transport.send("a", a.address, test_frame(i));
  a.transport.send("b", b.address, test_frame(1));
  REQUIRE(run_until(io, [&] { return a.received.size() == 50 && b.received.size() == 2; }));
  for (std::uint32_t i = 0; i < 50; ++i) CHECK(a.received[i] == test_frame(i));  // in order
  // b opened nothing: its frames went on a's connection, which a reads as
  // its own (inbound id 0), and a's link to b counts them as received.
  CHECK(b.counters().connect_attempts == 0);
  CHECK(b.counters().frames_sent_inbound == 50);
  CHECK(b.counters().inbound_adopted == 1);
  CHECK(std::all_of(a.inbound_ids.begin(), a.inbound_ids.end(), [](InboundId id) { return id == 0; }));
  CHECK(b.inbound_ids[1] == 0);  // adopted: no longer named
  const TransportStats stats = a.transport.stats();
  REQUIRE(stats.peers.size() == 1);
  CHECK(stats.peers[0].connected);
  CHECK(stats.peers[0].last_frame_ms > 0);
  CHECK(a.counters().connections_opened == 1);
  CHECK(a.counters().connections_accepted == 0);
}

TEST_CASE("both sides opened one: frames go on the smaller id's, the other falls idle") {
  boost::asio::io_context io;
  TransportSettings short_idle = settings_of("a");
  short_idle.idle_timeout_ms = 1'500;
  TestNode a(io, short_idle, 1);
  short_idle.self = "b";
  TestNode b(io, short_idle, 2);
  a.start();
  b.start();

  a.transport.send("b", b.address, test_frame(0));
  b.transport.send("a", a.address, test_frame(0));
  REQUIRE(run_until(io, [&] { return a.received.size() == 1 && b.received.size() == 1; }));
  adopt_all(a, "b", b.address);
  adopt_all(b, "a", a.address);
  REQUIRE(run_until(io, [&] { return count_of(a.up_paths, "b") == 2 && count_of(b.up_paths, "a") == 2; }));

  // Keep the pair busy past the idle timeout: only a's connection carries.
  for (std::uint32_t i = 1; i <= 30; ++i) {
    a.transport.send("b", b.address, test_frame(i));
    b.transport.send("a", a.address, test_frame(i));
    run_for(io, 100ms);
  }
  REQUIRE(run_until(io, [&] { return a.received.size() == 31 && b.received.size() == 31; }));
  CHECK(a.counters().frames_sent_inbound == 0);   // a ("a" < "b") writes on its own
  CHECK(b.counters().frames_sent_inbound == 30);  // b writes on a's
  // b's own connection carried nothing after its first frame: idle, closed.
  CHECK(b.counters().connections_idle_closed + a.counters().connections_idle_closed >= 1);
  CHECK(a.transport.stats().inbound_connections == 0);
  CHECK(b.transport.stats().inbound_connections == 1);
}

TEST_CASE("a peer that only its own connections reach is reached on them") {
  // a's connections to b are refused (b's address as a knows it is a port
  // that never listens), as behind a firewall that drops the connections
  // a's side opens; b's connections to a work.
  boost::asio::io_context io;
  TestNode a(io, settings_of("a"), 1);
  TestNode b(io, settings_of("b"), 2);
  a.start();
  b.start();
  RefusingPort nowhere(io);

  for (std::uint32_t i = 0; i < 5; ++i) a.transport.send("b", nowhere.endpoint(), test_frame(i));
  REQUIRE(run_until(io, [&] { return a.counters().connect_failures >= 2; }));
  CHECK(b.received.empty());

  b.transport.send("a", a.address, test_frame(100));
  REQUIRE(run_until(io, [&] { return a.received.size() == 1; }));
  adopt_all(a, "b", nowhere.endpoint());
  // The frames that waited, and those after, go on b's connection, in order.
  REQUIRE(run_until(io, [&] { return b.received.size() == 5; }));
  a.transport.send("b", nowhere.endpoint(), test_frame(5));
  REQUIRE(run_until(io, [&] { return b.received.size() == 6; }));
  for (std::uint32_t i = 0; i < 6; ++i) CHECK(b.received[i] == test_frame(i));
  CHECK(count_of(a.up_paths, "b") == 1);
  CHECK(a.counters().frames_sent_inbound == 6);
  CHECK(a.counters().connections_opened == 0);
}

TEST_CASE("an adopted connection that closes: the next frame opens one of ours") {
  boost::asio::io_context io;
  TestNode a(io, settings_of("a"), 1);
  TestNode b(io, settings_of("b"), 2);
  a.start();
  b.start();
  a.transport.send("b", b.address, test_frame(0));
  REQUIRE(run_until(io, [&] { return b.received.size() == 1; }));
  adopt_all(b, "a", a.address);
  REQUIRE(run_until(io, [&] { return count_of(b.up_paths, "a") == 1; }));

  a.transport.retain_peers({});  // a closes its link (and connection) to b
  REQUIRE(run_until(io, [&] { return b.transport.stats().inbound_connections == 0; }));
  b.transport.send("a", a.address, test_frame(1));
  REQUIRE(run_until(io, [&] { return a.received.size() == 1; }));
  CHECK(a.received[0] == test_frame(1));
  CHECK(b.counters().connections_opened == 1);
  CHECK(a.inbound_ids.back() != 0);  // on b's own connection this time
}

TEST_CASE("retry_now cuts a reconnect backoff short, at most once per interval") {
  boost::asio::io_context io;
  TransportSettings slow = settings_of("a");
  slow.backoff_min_ms = 20'000;  // without retry_now the next attempt is 20 s away
  slow.backoff_max_ms = 20'000;
  TestNode a(io, slow, 1);
  a.start();
  RefusingPort b_port(io);
  a.transport.send("b", b_port.endpoint(), test_frame(0));
  REQUIRE(run_until(io, [&] { return a.counters().connect_failures == 1; }));
  run_for(io, 300ms);
  CHECK(a.counters().connect_attempts == 1);

  a.transport.retry_now();
  REQUIRE(run_until(io, [&] { return a.counters().connect_attempts == 2; }));
  CHECK(a.counters().retries_now == 1);
  a.transport.retry_now();  // within kRetryNowIntervalMs: nothing
  run_for(io, 300ms);
  CHECK(a.counters().connect_attempts == 2);
  CHECK(a.counters().retries_now == 1);
}
