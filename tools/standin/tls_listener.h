// `meshnode-standin listen`: a TLS server standing in for a VPN server's
// traffic listener (docs/CONFIG.md, "The stand-in VPN listener"). It
// completes TLS handshakes with any SNI using a self-signed certificate made
// at start-up, and treats the clients listed in the block file the way a
// censor would (session.h). One thread; never blocks on a client.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

namespace mesh::standin {

struct ListenerOptions {
  std::string address;                         // "IP:port" or "[IPv6]:port"
  std::string block_file;                      // "" = no block file
  std::chrono::milliseconds deadline{10'000};  // per connection
  std::size_t connections_max = 4096;          // more at once: closed at accept
};

// The block file is checked once a second (kBlockFilePollMs) and on SIGHUP.
inline constexpr std::int64_t kBlockFilePollMs = 1000;

// Runs until SIGTERM or SIGINT. Logs to stderr: the bound address, one line
// per block-file reload, and the counters at exit. Returns the exit code: 0
// after a signal, 2 when the address is bad or cannot be bound.
int run_listener(const ListenerOptions& options);

}  // namespace mesh::standin
