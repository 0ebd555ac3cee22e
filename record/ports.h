// meshnode's default TCP ports, shared by the roster reader (a server's
// `gossip` endpoint without a port) and the node config (`[gossip] listen`).
// Why these numbers: docs/CONFIG.md, "Default ports".
#pragma once

#include <cstdint>

namespace mesh {

// Where a VPN server's listener takes users' connections: a probe endpoint
// without a port means HTTPS's port, like the apps it stands in for.
inline constexpr std::uint16_t kDefaultProbePort = 443;

// meshnode's gossip listener. Unregistered with IANA, absent from Debian's
// /etc/services and from nmap's table of ports seen open on the Internet,
// below the Linux ephemeral range, and clear of the ports VPN servers'
// other software takes (Serf/Consul's 7946, panels, exporters).
inline constexpr std::uint16_t kDefaultGossipPort = 4716;

// The panel API of the next issue (an `[api]` table in the node config):
// the port above the gossip port, chosen by the same rules.
inline constexpr std::uint16_t kDefaultApiPort = kDefaultGossipPort + 1;

}  // namespace mesh
