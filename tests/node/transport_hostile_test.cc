// node/transport.h against hostile or broken clients: absurd lengths,
// garbage, a stall mid-frame, silent connections, a flood of connections.
// In every case the offender is closed and counted, nothing large is
// allocated, and a good peer's frames still arrive.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "node/frame_connection.h"
#include "tests/node/allocation_probe.h"
#include "tests/node/transport_fixture.h"

using namespace mesh;
using namespace mesh::node;
using namespace mesh::node::test;

namespace {

// b listens; a is a good peer sending to b.
struct HostileSetup {
  explicit HostileSetup(TransportSettings b_settings)
      : a(io, test_settings(), 1), b(io, std::move(b_settings), 2) {
    a.start();
    b.start();
  }
  // a sends `count` frames to b and they all arrive.
  bool good_peer_served(std::uint32_t count) {
    const std::size_t before = b.received.size();
    for (std::uint32_t i = 0; i < count; ++i) a.transport.send("b", b.address, test_frame(i));
    return run_until(io, [&] { return b.received.size() == before + count; });
  }

  boost::asio::io_context io;
  TestNode a;
  TestNode b;
};

}  // namespace

TEST_CASE("a length of 0xFFFFFFFF closes the connection, counted, nothing large allocated") {
  HostileSetup setup(test_settings());
  auto& io = setup.io;
  REQUIRE(setup.good_peer_served(3));

  RawClient liar(io, setup.b.address);
  liar.watch_close();
  reset_largest_allocation();
  liar.send_prefix(0xffffffffu);
  REQUIRE(run_until(io, [&] { return liar.closed; }));
  CHECK(setup.b.counters().frames_oversize == 1);
  CHECK(largest_allocation() < FrameConnection::kReadChunkBytes * 2);

  // Length 0 is refused the same way.
  RawClient empty(io, setup.b.address);
  empty.watch_close();
  empty.send_prefix(0);
  REQUIRE(run_until(io, [&] { return empty.closed; }));
  CHECK(setup.b.counters().frames_oversize == 2);
  CHECK(setup.good_peer_served(3));
  CHECK(setup.b.received.size() == 6);  // nothing from the liars reached on_frame
}

TEST_CASE("garbage bytes: closed as an oversize length (the transport reads no further)") {
  HostileSetup setup(test_settings());
  RawClient http(setup.io, setup.b.address);
  http.watch_close();
  const std::string request = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";  // "GET " = 1.2e9
  http.send(Bytes(request.begin(), request.end()));
  REQUIRE(run_until(setup.io, [&] { return http.closed; }));
  CHECK(setup.b.counters().frames_oversize == 1);
  CHECK(setup.good_peer_served(3));
}

TEST_CASE("a valid announced length costs only the bytes that really arrived") {
  HostileSetup setup(test_settings());
  RawClient teaser(setup.io, setup.b.address);
  reset_largest_allocation();
  teaser.send_prefix(static_cast<std::uint32_t>(gossip::kFrameBytesMax));
  teaser.send(Bytes(10, 0x41));
  REQUIRE(setup.good_peer_served(3));  // meanwhile b read the teaser's prefix
  CHECK(largest_allocation() < FrameConnection::kReadChunkBytes * 2);
}

TEST_CASE("a client stalling mid-frame is closed after read_timeout; others are served meanwhile") {
  TransportSettings settings = test_settings();
  settings.read_timeout_ms = 3'000;
  HostileSetup setup(settings);
  auto& io = setup.io;
  RawClient staller(io, setup.b.address);
  staller.watch_close();
  staller.send_prefix(1'000);
  staller.send(Bytes(500, 0x42));

  // The good peer's frames arrive while the staller still holds its half frame.
  REQUIRE(setup.good_peer_served(20));
  CHECK(setup.b.counters().frames_read_timeout == 0);
  CHECK_FALSE(staller.closed);

  REQUIRE(run_until(io, [&] { return staller.closed; }));
  CHECK(setup.b.counters().frames_read_timeout == 1);
  CHECK(setup.good_peer_served(5));
  CHECK(setup.b.received.size() == 25);
}

TEST_CASE("unauthenticated clients are closed at the auth deadline, heard or not; an adopted one only when idle") {
  TransportSettings settings = test_settings();
  settings.auth_timeout_ms = 300;  // a member's first frame is adopted at once
  settings.idle_timeout_ms = 900;
  HostileSetup setup(settings);
  auto& io = setup.io;

  RawClient silent(io, setup.b.address);  // connects and says nothing
  silent.watch_close();
  RawClient talker(io, setup.b.address);  // one frame the core never adopts
  talker.watch_close();
  const Bytes frame = test_frame(9);
  talker.send_prefix(static_cast<std::uint32_t>(frame.size()));
  talker.send(frame);

  REQUIRE(run_until(io, [&] { return silent.closed && talker.closed; }));
  CHECK(setup.b.counters().inbound_unauthenticated_closed == 2);
  CHECK(setup.b.counters().connections_idle_closed == 0);
  REQUIRE(setup.b.received.size() == 1);  // a frame is a frame: the core judges it
  CHECK(setup.b.received[0] == frame);

  // A connection adopted on its first frame outlives the auth deadline and is
  // closed only by the idle one.
  RawClient member(io, setup.b.address);
  member.watch_close();
  const Bytes hello = test_frame(10);
  member.send_prefix(static_cast<std::uint32_t>(hello.size()));
  member.send(hello);
  REQUIRE(run_until(io, [&] { return setup.b.received.size() == 2; }));
  REQUIRE(setup.b.inbound_ids.back() != 0);
  setup.b.transport.adopt(setup.b.inbound_ids.back(), "m", Endpoint{"127.0.0.1", 1});
  run_for(io, std::chrono::milliseconds(500));
  CHECK_FALSE(member.closed);
  CHECK(setup.b.transport.stats().inbound_unauthenticated == 0);
  REQUIRE(run_until(io, [&] { return member.closed; }));
  CHECK(setup.b.counters().connections_idle_closed == 1);
  CHECK(setup.b.counters().inbound_unauthenticated_closed == 2);
}

TEST_CASE("a flood of unauthenticated connections evicts its own, never a member; refused only when all are members") {
  TransportSettings settings = test_settings();
  settings.inbound_connections_max = 4;
  settings.inbound_unauthenticated_per_source_max = 8;  // one source may fill the table
  HostileSetup setup(settings);
  auto& io = setup.io;

  // The flood fills the table and goes on: each newcomer evicts the oldest.
  std::vector<std::unique_ptr<RawClient>> flood;
  for (int i = 0; i < 10; ++i) {
    flood.push_back(std::make_unique<RawClient>(io, setup.b.address));
    flood.back()->watch_close();
  }
  const auto closed = [&] {
    return std::count_if(flood.begin(), flood.end(), [](const auto& client) { return client->closed; });
  };
  REQUIRE(run_until(io, [&] { return closed() == 6; }));
  CHECK(setup.b.counters().inbound_evicted == 6);
  CHECK(setup.b.counters().inbound_refused == 0);
  for (int i = 6; i < 10; ++i) CHECK_FALSE(flood[i]->closed);  // the newest four stay

  // A member still gets in (it evicts a silent one) and, adopted, stays.
  std::vector<std::unique_ptr<RawClient>> members;
  for (std::uint32_t m = 0; m < 4; ++m) {
    members.push_back(std::make_unique<RawClient>(io, setup.b.address));
    members.back()->watch_close();
    const Bytes hello = test_frame(100 + m);
    members.back()->send_prefix(static_cast<std::uint32_t>(hello.size()));
    members.back()->send(hello);
    REQUIRE(run_until(io, [&] { return setup.b.received.size() == m + 1; }));
    setup.b.transport.adopt(setup.b.inbound_ids.back(), "m" + std::to_string(m), Endpoint{"127.0.0.1", 1});
  }
  REQUIRE(run_until(io, [&] { return closed() == 10; }));
  CHECK(setup.b.counters().inbound_evicted == 10);
  CHECK(run_until(io, [&] { return setup.b.transport.stats().inbound_unauthenticated == 0; }));

  // Now every slot is a member's: a newcomer is refused, the members are not touched.
  RawClient late(io, setup.b.address);
  late.watch_close();
  REQUIRE(run_until(io, [&] { return late.closed; }));
  CHECK(setup.b.counters().inbound_refused == 1);
  for (auto& member : members) CHECK_FALSE(member->closed);
  for (auto& member : members) member->close();
}
