// A peer that sends garbage, stalls mid-frame or holds connections open:
// the node under attack keeps gossiping and its verdicts keep moving.
#include <doctest/doctest.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <map>
#include <random>
#include <thread>

#include "record/envelope.h"
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

// An outsider that holds `per_target` idle connections on each target's
// gossip port from `sources` addresses (127.200.0.1, ...), and re-opens
// each one the node closes, until destroyed.
class ConnectionFlood {
 public:
  ConnectionFlood(std::vector<std::string> targets, std::uint16_t port, std::size_t per_target, std::size_t sources)
      : targets_(std::move(targets)), port_(port), per_target_(per_target), sources_(sources) {
    thread_ = std::thread([this] { run(); });
  }
  ~ConnectionFlood() {
    stop_ = true;
    thread_.join();
    for (auto& slot : slots_) ::close(slot.fd);
  }
  std::uint64_t opened() const { return opened_.load(); }

 private:
  struct Slot {
    int fd = -1;
    std::size_t target = 0;
  };
  int open_one(std::size_t target, std::size_t index) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) return -1;
    const std::size_t source = index % sources_;
    sockaddr_in from = loopback_address(
        "127.200." + std::to_string(source / 250) + "." + std::to_string(source % 250 + 1), 0);
    (void)::bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof from);
    sockaddr_in to = loopback_address(targets_[target], port_);
    (void)::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to);  // EINPROGRESS
    ++opened_;
    return fd;
  }
  void run() {
    // At nice 19: an outsider's CPU is its own machine's, not the servers'.
    // On the 2 cores the flood shares with three sanitized daemons, its
    // re-opening as fast as it can (137 000 connections in 40 s once) took
    // the cores from every daemon, the unflooded n3 too, until none
    // published a heartbeat for 30 s (the sanitized suite, 2026-12-06):
    // that measured the rig, not who holds the places.
    (void)::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), 19);
    for (std::size_t t = 0; t < targets_.size(); ++t) {
      for (std::size_t k = 0; k < per_target_; ++k) slots_.push_back(Slot{open_one(t, k), t});
    }
    std::vector<pollfd> polled(slots_.size());
    std::size_t reopened = 0;
    while (!stop_) {
      for (std::size_t k = 0; k < slots_.size(); ++k) polled[k] = pollfd{slots_[k].fd, POLLIN, 0};
      if (::poll(polled.data(), polled.size(), 100) <= 0) continue;
      for (std::size_t k = 0; k < slots_.size(); ++k) {
        if (slots_[k].fd >= 0 && (polled[k].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
        char byte;
        if (slots_[k].fd >= 0 && ::recv(slots_[k].fd, &byte, 1, MSG_DONTWAIT) > 0) continue;
        ::close(slots_[k].fd);  // closed by the node (or never connected): again
        slots_[k].fd = open_one(slots_[k].target, ++reopened);
      }
    }
  }

  std::vector<std::string> targets_;
  std::uint16_t port_;
  std::size_t per_target_, sources_;
  std::vector<Slot> slots_;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> opened_{0};
  std::thread thread_;
};

void raise_open_files_limit(rlim_t wanted) {
  rlimit limit{};
  ::getrlimit(RLIMIT_NOFILE, &limit);
  limit.rlim_cur = std::min(limit.rlim_max, std::max(limit.rlim_cur, wanted));
  ::setrlimit(RLIMIT_NOFILE, &limit);
}

// Each origin's newest record (kind and origin -> seq) in node i's store.
std::map<std::string, std::uint64_t> newest_records(const DaemonFleet& fleet, std::uint32_t i) {
  std::map<std::string, std::uint64_t> newest;
  for (const Bytes& raw : fleet.records(i)) {
    auto envelope = decode_envelope_view(raw);
    REQUIRE(envelope.ok());
    const std::string key = std::string(to_string(envelope->kind)) + " " + std::string(envelope->origin);
    newest[key] = std::max(newest[key], envelope->seq);
  }
  return newest;
}

// The stores have converged up to `before`: every record that some node
// held then is held, or superseded by a newer one of its origin, by every
// node now. Not one instant at which all stores are equal: every node
// reports every 2 s here, so its own newest report is always on its way to
// the others, and under ctest -j2 beside the e2e suite no such instant came
// within 20 s twice on 2026-12-06 (the stores differed then by n2's and
// n3's newest report only).
bool records_converged(const DaemonFleet& fleet, const std::vector<std::map<std::string, std::uint64_t>>& before) {
  for (std::uint32_t i = 0; i < fleet.size(); ++i) {
    const auto now = newest_records(fleet, i);
    for (const auto& held : before) {
      for (const auto& [key, seq] : held) {
        auto it = now.find(key);
        if (it == now.end() || it->second < seq) return false;
      }
    }
  }
  return true;
}

#ifdef __SANITIZE_ADDRESS__
constexpr auto kBackWithin = std::chrono::seconds(40);
#else
constexpr auto kBackWithin = std::chrono::seconds(20);
#endif

// docs/PROTOCOL.md §2a, "Who may hold a connection". The finding: an
// outsider holding ~515 idle connections on two nodes' gossip ports,
// re-opening each one closed, kept a restarting third node no_data at
// every node for the whole flood.
TEST_CASE("an outsider's idle connections cannot keep a restarting member out") {
  raise_open_files_limit(8'192);
  DaemonFleet fleet(3, 48);  // as found: n3 has no other member to relay for it
  fleet.start_all();
  INFO("logs in " << fleet.dir());
  REQUIRE(DaemonFleet::wait([&] { return fleet.all_show(fleet.everyone(), "n3", "ok"); }, seconds(60)));

  for (const std::size_t per_target : {std::size_t{600}, std::size_t{2'000}}) {
    CAPTURE(per_target);
    ConnectionFlood flood({fleet.address(0), fleet.address(1)}, fleet.gossip_port(), per_target, 200);
    REQUIRE(DaemonFleet::wait([&] { return flood.opened() >= 2 * per_target; }, seconds(20)));
    fleet.kill_daemon(2);
    REQUIRE(DaemonFleet::wait([&] { return fleet.all_show({0, 1}, "n3", "no_data"); }, seconds(30)));
    const auto restarted = std::chrono::steady_clock::now();
    fleet.start_daemon(2);
    // The time it needs without any flood: a few heartbeats (2 s each
    // here). Sanitized, the daemons and the flood itself (this process)
    // share the 2 cores at several times the cost: 2,000 connections each
    // way took over 20 s there once (the sanitized suite, 2026-12-05).
    CHECK(DaemonFleet::wait([&] { return fleet.all_show(fleet.everyone(), "n3", "ok"); }, kBackWithin));
    MESSAGE("n3 ok everywhere "
            << std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - restarted)
                   .count()
            << " ms after its restart, under " << per_target << " connections on each of n1 and n2 ("
            << flood.opened() << " opened)");
    std::vector<std::map<std::string, std::uint64_t>> before;
    for (std::uint32_t i = 0; i < fleet.size(); ++i) before.push_back(newest_records(fleet, i));
    CHECK(DaemonFleet::wait([&] { return records_converged(fleet, before); }, seconds(20)));
  }
  CHECK(fleet.log_text(0).find("shedding inbound connections") != std::string::npos);
  CHECK(fleet.daemon_running(0));
  CHECK(fleet.daemon_running(1));
}

}  // namespace
}  // namespace mesh::test
