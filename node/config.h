// The daemon's config file (`meshnode --config FILE`; docs/CONFIG.md, "The
// node config file"): this node's identity, where it keeps its files, and
// the tuning of its sockets, self-checks and logs. What the whole fleet must
// agree on (verdict and probe parameters) is in the signed roster instead.
//
// Reading is strict like the roster's: unknown keys, wrong types and
// values out of range are errors whose message names the line and the key:
//   config /etc/meshnode/meshnode.toml line 7: [probe] tls_every: must be 1..1000, got 0
// Every key has a default except node_id, key_file and operator_key.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "common/server_id.h"
#include "common/time.h"
#include "node/agent/config.h"
#include "record/keys.h"
#include "record/ports.h"
#include "record/roster.h"

namespace mesh::node {

// The config file may be at most this large; a larger one is refused.
inline constexpr std::size_t kConfigFileBytesMax = 1024 * 1024;
// Paths, commands and other strings in the file: at most this many bytes.
inline constexpr std::size_t kConfigStringBytesMax = 4096;

enum class ConfigError {
  unreadable,   // cannot open or read the file, or it is not a regular file
  too_large,    // the file is over kConfigFileBytesMax
  syntax,       // not TOML (toml++'s message, with the line)
  unknown_key,  // a key or table this version does not know
  missing_key,  // node_id, key_file or operator_key absent
  wrong_type,   // e.g. a string where an integer belongs
  bad_value,    // out of range, bad endpoint, address, key hex, service spec
};

// The enumerator's name ("bad_value"), for logs and tools.
const char* to_string(ConfigError error);

enum class LogFormat { text, json };
enum class LogLevel { trace, debug, info, warn, error };

const char* to_string(LogFormat format);
const char* to_string(LogLevel level);

// [gossip]: the gossip listener and the connections to peers.
struct GossipConfig {
  Endpoint listen{"0.0.0.0", kDefaultGossipPort};  // host is an IP literal
  std::string source_address;  // local IP literal for outgoing connections; "" = any
  DurationMs connect_timeout_ms = 5'000;
  DurationMs idle_timeout_ms = 300'000;  // a peer connection idle this long is closed
  // Per-peer outgoing queue bound; at the bound new frames are dropped and
  // counted. At least one largest frame (gossip/config.h kFrameBytesMax).
  std::uint64_t queue_bytes_max = 8 * 1024 * 1024;
  DurationMs backoff_min_ms = 1'000;  // reconnect backoff, doubling up to the max
  DurationMs backoff_max_ms = 60'000;
  bool operator==(const GossipConfig&) const = default;
};

// [probe]: how this node probes its targets (docs/PROTOCOL.md, "Probes").
struct ProbeConfig {
  std::uint32_t tls_every = agent::kDefaultTlsEvery;  // a country's witnesses of a target make one TLS handshake every k probe intervals, taking turns (and more: docs/PROTOCOL.md, "Probes")
  DurationMs connect_timeout_ms = agent::kDefaultProbeConnectTimeoutMs;
  DurationMs tls_timeout_ms = agent::kDefaultProbeTlsTimeoutMs;
  std::uint32_t concurrent_max = 32;  // probes in flight at once
  std::string source_address;         // local IP literal probes bind to; "" = any
  bool operator==(const ProbeConfig&) const = default;
};

// [self_check]: what this node checks about its own server.
struct SelfCheckConfig {
  // This server's traffic listener; nullopt: this node's probe endpoint in
  // the roster.
  std::optional<Endpoint> listener;
  bool listener_tls = true;  // a TLS handshake after the connect
  // "" (none), "systemd:UNIT", "process:NAME" or "exec:COMMAND"; only the
  // syntax is checked here (node/service_check.h runs it).
  std::string service;
  DurationMs exec_timeout_ms = 5'000;  // an exec: check running longer fails
  bool operator==(const SelfCheckConfig&) const = default;
};

// [volume]
struct VolumeConfig {
  // 0 = the roster's volume_bytes_per_day_max, otherwise the smaller of the
  // two (effective_volume_cap_bytes).
  std::uint64_t cap_bytes_per_day = 0;
  bool operator==(const VolumeConfig&) const = default;
};

// [log]
struct LogConfig {
  LogFormat format = LogFormat::text;
  LogLevel level = LogLevel::info;
  bool operator==(const LogConfig&) const = default;
};

// [api]: the panel API (docs/API.md).
inline constexpr std::uint32_t kApiThreadsMax = 16;

struct ApiConfig {
  // Where the API listens (an IP literal and port); nullopt: no API.
  std::optional<Endpoint> listen = Endpoint{"127.0.0.1", kDefaultApiPort};
  std::string token_file = "/etc/meshnode/api-tokens";  // hashes of the bearer tokens
  std::string tls_cert_file;  // PEM chain; with tls_key_file the API speaks HTTPS only
  std::string tls_key_file;
  // A non-loopback listen without TLS is refused unless this says, in so
  // many words, that tokens may cross the network in clear.
  bool insecure_plaintext = false;
  // Threads serving the API, apart from the agent's: sessions never share
  // state but the latest snapshot, so a second core serves twice the load.
  std::uint32_t threads = 2;
  bool operator==(const ApiConfig&) const = default;
};

// [panel]: the panel sync (docs/PANELS.md). Off while `kind` is empty.
enum class PanelKind { none, remnawave, marzban };
const char* to_string(PanelKind kind);  // "", "remnawave", "marzban"

struct PanelConfig {
  PanelKind kind = PanelKind::none;
  std::string url;               // http(s)://host[:port][/path] of the panel
  std::string credentials_file = "/etc/meshnode/panel-credentials";
  bool dry_run = false;          // log what it would change, change nothing
  std::uint32_t changes_per_minute = 10;  // at most this many host changes a minute
  DurationMs interval_ms = 180'000;       // read and compare at least this often
  DurationMs timeout_ms = 10'000;         // one request, start to end
  // The nodes that may own the sync (they hold this section); empty: all.
  std::vector<ServerId> candidates;
  // server id -> the panel hosts that are that server (by id or remark);
  // others are matched by address and port ([panel.hosts]).
  std::map<ServerId, std::vector<std::string>> hosts;
  bool operator==(const PanelConfig&) const = default;
};

// [alerts]: one message per transition (docs/PANELS.md, "Alerts"). Off
// while neither a webhook nor Telegram is set.
struct AlertsConfig {
  std::string webhook_url;          // POSTed a JSON body per alert
  std::string webhook_secret_file;  // HMAC-SHA256 key for X-Meshnode-Signature; required with webhook_url
  std::string telegram_token_file;  // the bot's token; with telegram_chat_id
  std::string telegram_chat_id;
  std::string telegram_api = "https://api.telegram.org";
  std::string status_page_url;      // linked from every message; "" for none
  std::uint32_t flap_changes = 4;   // transitions within flap_window_ms that make a server "flapping"
  DurationMs flap_window_ms = 3'600'000;
  DurationMs settle_ms = 900'000;   // a flapping server settled after this long in one state
  DurationMs timeout_ms = 10'000;
  std::vector<ServerId> candidates;  // the nodes that may send (they hold this section); empty: all
  bool enabled() const { return !webhook_url.empty() || !telegram_token_file.empty(); }
  bool operator==(const AlertsConfig&) const = default;
};

// True for 127.0.0.0/8 and ::1.
bool is_loopback_host(std::string_view host);

struct NodeConfig {
  ServerId node_id;          // required; this node's id in the roster
  std::string key_file;      // required; the Ed25519 secret key file (not read here)
  PublicKey operator_key{};  // required; verifies the roster
  std::string data_dir = "/var/lib/meshnode";               // LMDB store and state
  std::string roster_file = "/etc/meshnode/roster.signed";  // may be absent at run time
  GossipConfig gossip;
  ProbeConfig probe;
  SelfCheckConfig self_check;
  VolumeConfig volume;
  LogConfig log;
  ApiConfig api;
  PanelConfig panel;
  AlertsConfig alerts;
  bool operator==(const NodeConfig&) const = default;
};

// The daily volume cap in force: the roster's, lowered by the node's own.
inline std::uint64_t effective_volume_cap_bytes(const NodeConfig& config,
                                                std::uint64_t roster_cap_bytes) {
  std::uint64_t own = config.volume.cap_bytes_per_day;
  if (own == 0) return roster_cap_bytes;
  return own < roster_cap_bytes ? own : roster_cap_bytes;
}

// Reads and checks the config file at `path`. Refuses, without blocking, a
// path that is not a regular file (a FIFO, a directory, a device), a file
// over kConfigFileBytesMax, and one that cannot be opened or read; those
// messages name the path. Does not read key_file or roster_file.
// Thread-safe (no shared state).
Result<NodeConfig, ConfigError> load_node_config(const std::string& path);

// Parses config text. `source_name` starts every message ("config
// /etc/meshnode/meshnode.toml"), followed by " line N: " and the key.
Result<NodeConfig, ConfigError> parse_node_config(std::string_view text,
                                                  std::string_view source_name);

// The effective config as TOML, every key spelled out with its value
// (defaults filled in), for `meshnode --check-config --print`.
// parse_node_config(describe_config(c), ...) == c for any parsed c.
std::string describe_config(const NodeConfig& config);

}  // namespace mesh::node
