// Loopback helpers for the node/ process tests: a free TCP port, and
// bounded waits (for a port to accept, for a condition) that poll in short
// steps instead of sleeping for a guessed time. Header-only.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

namespace mesh::test {

inline constexpr std::chrono::milliseconds kPollStep{10};

// Polls `done` every kPollStep until it is true (returns true) or `timeout`
// has passed (returns false).
inline bool wait_until(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (done()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(kPollStep);
  }
}

inline sockaddr_in loopback_address(const std::string& ipv4, std::uint16_t port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  if (inet_pton(AF_INET, ipv4.c_str(), &address.sin_addr) != 1) {
    throw std::invalid_argument("not an IPv4 address: " + ipv4);
  }
  return address;
}

// A TCP port that was free on `ipv4` a moment ago (the kernel's pick for
// port 0). Another process could take it before the caller binds it; the
// kernel hands ports out in turn, so that is rare.
inline std::uint16_t free_port(const std::string& ipv4 = "127.0.0.1") {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error("socket() failed");
  sockaddr_in address = loopback_address(ipv4, 0);
  socklen_t size = sizeof address;
  bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
            ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) == 0;
  ::close(fd);
  if (!ok) throw std::runtime_error("cannot bind a free port on " + ipv4);
  return ntohs(address.sin_port);
}

// One TCP connect to ipv4:port; true when it was accepted (then closed).
inline bool port_accepts(const std::string& ipv4, std::uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in address = loopback_address(ipv4, port);
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  ::close(fd);
  return ok;
}

// Polls until ipv4:port accepts a connection, at most `timeout`.
inline bool wait_for_port(const std::string& ipv4, std::uint16_t port,
                          std::chrono::milliseconds timeout) {
  return wait_until([&] { return port_accepts(ipv4, port); }, timeout);
}

// Whether a TCP socket listens on `ipv4`:`port` (or on 0.0.0.0:`port`), as
// /proc/net/tcp says, and how many connections wait in its accept queue:
// what a test that got no answer from a daemon's port prints.
inline std::string tcp_listen_state(const std::string& ipv4, std::uint16_t port) {
  const sockaddr_in address = loopback_address(ipv4, port);
  char wanted[16];
  char any[16];
  std::snprintf(wanted, sizeof wanted, "%08X:%04X", address.sin_addr.s_addr, port);
  std::snprintf(any, sizeof any, "%08X:%04X", 0u, port);
  std::ifstream in("/proc/net/tcp");
  std::string line;
  std::getline(in, line);  // the header
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string slot, local, remote, state, queues;
    fields >> slot >> local >> remote >> state >> queues;
    if (state != "0A" || (local != wanted && local != any)) continue;  // 0A: LISTEN
    const std::string waiting = queues.substr(queues.find(':') + 1);
    return "listening (" + local + "), " + std::to_string(std::stoul(waiting, nullptr, 16)) +
           " connections waiting to be accepted";
  }
  return "not listening";
}

}  // namespace mesh::test
