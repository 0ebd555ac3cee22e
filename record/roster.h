// The operator's roster: servers, routes and the parameters every node
// evaluates with. It travels as the payload of a `roster` record signed by
// the operator key; its version is that record's sequence number.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/bytes.h"
#include "common/result.h"
#include "common/server_id.h"
#include "common/time.h"
#include "record/envelope.h"
#include "record/keys.h"

namespace mesh {

inline constexpr std::size_t kRosterServersMax = 4096;
inline constexpr std::size_t kRosterRoutesMax = 1024;
inline constexpr std::size_t kRoutesPerServerMax = 64;
inline constexpr std::size_t kHostBytesMax = 253;
inline constexpr std::size_t kRouteNameBytesMax = 128;

struct Endpoint {
  std::string host;  // DNS name or IP literal (IPv6 without brackets)
  std::uint16_t port = 0;
  bool operator==(const Endpoint&) const = default;
};

struct Route {
  std::string id;    // same character rule as server ids
  std::string name;  // free text for humans, 1..kRouteNameBytesMax bytes
  bool operator==(const Route&) const = default;
};

struct ServerEntry {
  ServerId id;
  std::string country;  // ISO 3166-1 alpha-2, upper case ("DE")
  Endpoint probe;       // the VPN listener users connect to (default port 443)
  std::string sni;      // TLS server name used by probes
  Endpoint gossip;      // where this node's meshnode listens for gossip
  PublicKey key{};      // the node's Ed25519 key; signs its reports
  std::vector<std::string> routes;  // route ids, each present in Roster::routes
  bool operator==(const ServerEntry&) const = default;
};

// Verdict and probe parameters, carried in the signed roster so every node
// evaluates with the same ones (docs/VERDICTS.md). Fractions are permille so
// that quorum arithmetic stays in integers.
struct Parameters {
  DurationMs heartbeat_interval_ms = 300'000;
  DurationMs stale_after_ms = 720'000;
  DurationMs probe_interval_ms = 60'000;
  std::uint32_t fail_streak = 3;
  std::uint32_t unreliable_fraction_permille = 500;
  std::uint32_t unreliable_min_targets = 4;
  std::uint32_t witnesses_per_country = 3;  // 0: every server probes every other
  std::uint32_t quorum_witnesses = 3;       // quorum is min(this, M) but never below 2
  DurationMs epoch_ms = 3'600'000;          // witness assignment is re-drawn every epoch
  DurationMs max_clock_skew_ms = 30'000;    // records dated further ahead are refused
  std::uint64_t volume_bytes_per_day_max = 200ull * 1024 * 1024;
  bool operator==(const Parameters&) const = default;
};

struct Roster {
  std::uint64_t version = 0;  // == the roster record's seq
  std::vector<Route> routes;
  std::vector<ServerEntry> servers;  // in the operator's order; index = position
  Parameters params;
  bool operator==(const Roster&) const = default;

  // Index of server `id` in `servers`, or nullopt.
  std::optional<std::uint32_t> index_of(std::string_view id) const;
  const ServerEntry* find(std::string_view id) const;
};

enum class RosterError {
  malformed,           // payload is not the documented msgpack layout
  duplicate_server,    // two servers with the same id
  duplicate_route,     // two routes with the same id
  duplicate_key,       // two servers with the same public key
  bad_id,              // server or route id breaks the id rule
  bad_country,         // not two upper-case letters of ISO 3166-1 alpha-2
  bad_address,         // empty/oversize host, port 0, or unparsable host:port
  bad_sni,             // empty or not a DNS name
  unknown_route,       // a server names a route the roster does not define
  missing_key,         // a server without a public key
  bad_parameter,       // a parameter out of its documented range
  too_large,           // over kRosterServersMax / kRosterRoutesMax / per-field limits
  empty,               // no servers
};

// The enumerator's name ("bad_country"), for logs and tools.
const char* to_string(RosterError error);

// Checks every rule of docs/CONFIG.md on a roster. The first broken rule is
// reported, naming the server or route and the field.
Status<RosterError> validate_roster(const Roster& roster);

// Payload codec (docs/PROTOCOL.md, "Roster payload"). decode also validates.
Bytes encode_roster_payload(const Roster& roster);
Result<Roster, RosterError> decode_roster_payload(ByteView payload, std::uint64_t version);

// Parses "host:port" or "[v6]:port"; a missing port takes `default_port`.
std::optional<Endpoint> parse_endpoint(std::string_view text, std::uint16_t default_port);
// The inverse: "host:port", IPv6 hosts in brackets ("[::1]:7946").
std::string format_endpoint(const Endpoint& endpoint);

}  // namespace mesh
