// A peer that sends garbage, stalls mid-frame or holds connections open:
// the node under attack keeps gossiping and its verdicts keep moving.
#include <doctest/doctest.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <random>

#include "tests/node/daemon_fleet.h"
#include "tests/node/net_util.h"

namespace mesh::test {
namespace {

using std::chrono::seconds;

// A raw TCP connection to the node's gossip port, closed on destruction.
class RawClient {
 public:
  RawClient(const std::string& address, std::uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in to = loopback_address(address, port);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&to), sizeof to) == 0;
  }
  ~RawClient() { ::close(fd_); }
  bool connected() const { return connected_; }
  void send(const Bytes& bytes) { (void)::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL); }

 private:
  int fd_ = -1;
  bool connected_ = false;
};

Bytes length_prefix(std::uint32_t length) {
  return {static_cast<std::uint8_t>(length >> 24), static_cast<std::uint8_t>(length >> 16),
          static_cast<std::uint8_t>(length >> 8), static_cast<std::uint8_t>(length)};
}

TEST_CASE("a node under garbage, stalled and idle connections keeps up with its fleet") {
  DaemonFleet fleet(4, 43);
  fleet.start_all();
  INFO("logs in " << fleet.dir());
  REQUIRE(DaemonFleet::wait([&] { return fleet.all_show(fleet.everyone(), "n4", "ok"); }, seconds(60)));
  const std::string target = fleet.address(0);
  std::vector<std::unique_ptr<RawClient>> attackers;
  // A length no frame may have.
  attackers.push_back(std::make_unique<RawClient>(target, fleet.gossip_port()));
  attackers.back()->send(length_prefix(0xFFFFFFFF));
  // A frame announced, a few bytes of it, then nothing.
  attackers.push_back(std::make_unique<RawClient>(target, fleet.gossip_port()));
  Bytes stalled = length_prefix(1'000);
  stalled.resize(stalled.size() + 10, 0xA1);
  attackers.back()->send(stalled);
  // Well-framed garbage: frames that open for no key.
  std::mt19937 random(7);
  for (int k = 0; k < 5; ++k) {
    attackers.push_back(std::make_unique<RawClient>(target, fleet.gossip_port()));
    Bytes frame = length_prefix(300);
    for (int b = 0; b < 300; ++b) frame.push_back(static_cast<std::uint8_t>(random()));
    attackers.back()->send(frame);
  }
  // Connections that say nothing and stay open.
  for (int k = 0; k < 50; ++k) {
    attackers.push_back(std::make_unique<RawClient>(target, fleet.gossip_port()));
  }
  CHECK(attackers.front()->connected());
  // Meanwhile the fleet changes, and the attacked node sees it as the others do.
  fleet.stop_service(3);
  CHECK(DaemonFleet::wait([&] { return fleet.all_show(fleet.everyone(), "n4", "unavailable"); },
                          seconds(40)));
  fleet.start_service(3);
  CHECK(DaemonFleet::wait([&] { return fleet.all_show(fleet.everyone(), "n4", "ok"); }, seconds(40)));
  CHECK(fleet.daemon_running(0));
}

}  // namespace
}  // namespace mesh::test
