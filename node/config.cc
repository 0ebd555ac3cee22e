#include "node/config.h"

#include <algorithm>
#include <initializer_list>

#include "common/toml.h"
#include "gossip/config.h"
#include "node/config_api.h"
#include "node/config_panel.h"
#include "node/config_table.h"
#include "node/service_check.h"
#include "record/address.h"
#include "record/envelope.h"

namespace mesh::node {
namespace {

using Parsed = Result<NodeConfig, ConfigError>;

constexpr std::int64_t kMiB = 1024 * 1024;
constexpr std::int64_t kGiB = 1024 * kMiB;
constexpr std::int64_t kTiB = 1024 * kGiB;
constexpr std::int64_t kHourMs = 3'600'000;
constexpr std::int64_t kDayMs = 24 * kHourMs;
// The roster's own range for volume_bytes_per_day_max (record/parameters.cc).
constexpr std::int64_t kVolumeCapMin = kMiB;
constexpr std::int64_t kVolumeCapMax = kTiB;

// A non-empty path of printable text, at most kConfigStringBytesMax bytes.
Status<ConfigError> read_path(const ConfigTable& table, std::string_view key, bool required,
                              std::string& out) {
  const toml::node* node = nullptr;
  if (auto s = table.string(key, required, out, node); !s || node == nullptr) return s;
  if (out.empty() || !is_printable_utf8(out)) {
    return table.fail(ConfigError::bad_value, *node, key,
                      "must be a non-empty path without control characters");
  }
  return Ok{};
}

// "" or an IP literal (no brackets, no port): the local address to bind to.
Status<ConfigError> read_source_address(const ConfigTable& table, std::string& out) {
  const toml::node* node = nullptr;
  if (auto s = table.string("source_address", false, out, node); !s || node == nullptr) return s;
  if (!out.empty() && !is_ipv4_literal(out) && !is_ipv6_literal(out)) {
    return table.fail(ConfigError::bad_value, *node, "source_address",
                      "must be \"\" (any) or a local IP address such as 192.0.2.1 or "
                      "2001:db8::1 (no brackets, no port), got '" +
                          out + "'");
  }
  return Ok{};
}

Status<ConfigError> read_top_level(const ConfigTable& top, NodeConfig& config) {
  const toml::node* node = nullptr;
  if (auto s = top.string("node_id", true, config.node_id, node); !s) return s;
  if (!is_valid_server_id(config.node_id) || config.node_id == kOperatorOrigin) {
    return top.fail(ConfigError::bad_value, *node, "node_id",
                    "'" + config.node_id +
                        "' is not a server id (1..64 bytes of [a-z0-9._-], "
                        "starting with a letter or digit, not 'operator')");
  }
  if (auto s = read_path(top, "key_file", true, config.key_file); !s) return s;
  std::string key_hex;
  if (auto s = top.string("operator_key", true, key_hex, node); !s) return s;
  auto key = public_key_from_hex(key_hex);
  if (!key || std::all_of(key->begin(), key->end(), [](std::uint8_t b) { return b == 0; })) {
    return top.fail(ConfigError::bad_value, *node, "operator_key",
                    "must be the operator's public key, 64 hex characters, not all zero");
  }
  config.operator_key = *key;
  if (auto s = read_path(top, "data_dir", false, config.data_dir); !s) return s;
  return read_path(top, "roster_file", false, config.roster_file);
}

Status<ConfigError> read_gossip(const ConfigTable& t, GossipConfig& gossip) {
  if (auto s = t.allow_only({"listen", "source_address", "connect_timeout_ms", "idle_timeout_ms",
                             "queue_bytes_max", "backoff_min_ms", "backoff_max_ms"});
      !s) {
    return s;
  }
  std::string listen;
  const toml::node* node = nullptr;
  if (auto s = t.string("listen", false, listen, node); !s) return s;
  if (node != nullptr) {
    auto endpoint = parse_endpoint(listen, kDefaultGossipPort);
    if (!endpoint || (!is_ipv4_literal(endpoint->host) && !is_ipv6_literal(endpoint->host))) {
      return t.fail(ConfigError::bad_value, *node, "listen",
                    "must be IP:port or [IPv6]:port (a local address, 0.0.0.0 or [::] for all; "
                    "port 1..65535, default " +
                        std::to_string(kDefaultGossipPort) + "), got '" + listen + "'");
    }
    gossip.listen = *endpoint;
  }
  if (auto s = read_source_address(t, gossip.source_address); !s) return s;
  if (auto s = t.integer("connect_timeout_ms", 100, 60'000, gossip.connect_timeout_ms); !s)
    return s;
  if (auto s = t.integer("idle_timeout_ms", 10'000, kDayMs, gossip.idle_timeout_ms); !s) return s;
  if (auto s = t.integer("queue_bytes_max", static_cast<std::int64_t>(gossip::kFrameBytesMax), kGiB,
                         gossip.queue_bytes_max);
      !s) {
    return s;
  }
  if (auto s = t.integer("backoff_min_ms", 100, kHourMs, gossip.backoff_min_ms); !s) return s;
  if (auto s = t.integer("backoff_max_ms", 100, kHourMs, gossip.backoff_max_ms); !s) return s;
  if (gossip.backoff_min_ms > gossip.backoff_max_ms) {
    const toml::node& at =
        t.get("backoff_min_ms") ? *t.get("backoff_min_ms") : *t.get("backoff_max_ms");
    return t.fail(ConfigError::bad_value, at, "backoff_min_ms",
                  "must be <= backoff_max_ms (" + std::to_string(gossip.backoff_max_ms) +
                      "), got " + std::to_string(gossip.backoff_min_ms));
  }
  return Ok{};
}

Status<ConfigError> read_probe(const ConfigTable& t, ProbeConfig& probe) {
  if (auto s = t.allow_only({"tls_every", "connect_timeout_ms", "tls_timeout_ms", "concurrent_max",
                             "source_address"});
      !s) {
    return s;
  }
  if (auto s = t.integer("tls_every", 1, 1000, probe.tls_every); !s) return s;
  // At least 3.5 s (agent::kProbeConnectTimeoutMinMs).
  if (auto s = t.integer("connect_timeout_ms", agent::kProbeConnectTimeoutMinMs, 60'000, probe.connect_timeout_ms); !s)
    return s;
  if (auto s = t.integer("tls_timeout_ms", 1'000, 60'000, probe.tls_timeout_ms); !s) return s;
  if (auto s = t.integer("concurrent_max", 1, 1024, probe.concurrent_max); !s) return s;
  return read_source_address(t, probe.source_address);
}

Status<ConfigError> read_self_check(const ConfigTable& t, SelfCheckConfig& self_check) {
  if (auto s = t.allow_only({"listener", "listener_tls", "service", "exec_timeout_ms"}); !s)
    return s;
  std::string listener;
  const toml::node* node = nullptr;
  if (auto s = t.string("listener", false, listener, node); !s) return s;
  if (node != nullptr && !listener.empty()) {
    self_check.listener = parse_endpoint(listener, kDefaultProbePort);
    if (!self_check.listener) {
      return t.fail(ConfigError::bad_value, *node, "listener",
                    "must be \"\" (the roster's probe endpoint) or host:port (a DNS name or IP "
                    "literal, [v6] in brackets, port 1..65535), got '" +
                        listener + "'");
    }
  }
  if (auto s = t.boolean("listener_tls", self_check.listener_tls); !s) return s;
  if (auto s = t.string("service", false, self_check.service, node); !s) return s;
  if (node != nullptr) {
    // The self-check's own parser (node/service_check.h) is the rule.
    if (auto spec = parse_service_spec(self_check.service); !spec) {
      return t.fail(ConfigError::bad_value, *node, "service",
                    "must be \"\", \"systemd:UNIT\", \"process:NAME\" or \"exec:COMMAND\": " +
                        spec.message());
    }
  }
  return t.integer("exec_timeout_ms", 100, 60'000, self_check.exec_timeout_ms);
}

Status<ConfigError> read_volume(const ConfigTable& t, VolumeConfig& volume) {
  if (auto s = t.allow_only({"cap_bytes_per_day"}); !s) return s;
  if (auto s = t.integer("cap_bytes_per_day", 0, kVolumeCapMax, volume.cap_bytes_per_day); !s)
    return s;
  if (volume.cap_bytes_per_day != 0 && volume.cap_bytes_per_day < kVolumeCapMin) {
    return t.fail(ConfigError::bad_value, *t.get("cap_bytes_per_day"), "cap_bytes_per_day",
                  "must be 0 (the roster's cap) or " + std::to_string(kVolumeCapMin) + ".." +
                      std::to_string(kVolumeCapMax) + ", got " +
                      std::to_string(volume.cap_bytes_per_day));
  }
  return Ok{};
}

Status<ConfigError> read_log(const ConfigTable& t, LogConfig& log) {
  if (auto s = t.allow_only({"format", "level"}); !s) return s;
  if (auto s = t.choice("format", {LogFormat::text, LogFormat::json}, log.format); !s) return s;
  return t.choice(
      "level", {LogLevel::trace, LogLevel::debug, LogLevel::info, LogLevel::warn, LogLevel::error},
      log.level);
}

// Reads `[name]` with `read` when present (every key has a default).
template <class T, class Reader>
Status<ConfigError> read_table(const ConfigTable& top, std::string_view name, Reader read, T& out) {
  const toml::table* table = nullptr;
  if (auto s = top.subtable(name, table); !s || table == nullptr) return s;
  return read(ConfigTable(*table, name, top.source()), out);
}

Parsed read_config(const toml::table& root, std::string_view source) {
  ConfigTable top(root, "", source);
  if (auto s = top.allow_only({"node_id", "key_file", "operator_key", "data_dir", "roster_file",
                               "gossip", "probe", "self_check", "volume", "log", "api", "panel", "alerts"});
      !s) {
    return s.error();
  }
  NodeConfig config;
  if (auto s = read_top_level(top, config); !s) return s.error();
  if (auto s = read_table(top, "gossip", read_gossip, config.gossip); !s) return s.error();
  if (auto s = read_table(top, "probe", read_probe, config.probe); !s) return s.error();
  if (auto s = read_table(top, "self_check", read_self_check, config.self_check); !s)
    return s.error();
  if (auto s = read_table(top, "volume", read_volume, config.volume); !s) return s.error();
  if (auto s = read_table(top, "log", read_log, config.log); !s) return s.error();
  if (auto s = read_table(top, "api", read_api_table, config.api); !s) return s.error();
  if (auto s = read_table(top, "panel", read_panel_table, config.panel); !s) return s.error();
  if (auto s = read_table(top, "alerts", read_alerts_table, config.alerts); !s) return s.error();
  return config;
}

}  // namespace

const char* to_string(ConfigError error) {
  switch (error) {
    case ConfigError::unreadable: return "unreadable";
    case ConfigError::too_large: return "too_large";
    case ConfigError::syntax: return "syntax";
    case ConfigError::unknown_key: return "unknown_key";
    case ConfigError::missing_key: return "missing_key";
    case ConfigError::wrong_type: return "wrong_type";
    case ConfigError::bad_value: return "bad_value";
  }
  return "?";
}

const char* to_string(LogFormat format) { return format == LogFormat::json ? "json" : "text"; }

const char* to_string(LogLevel level) {
  switch (level) {
    case LogLevel::trace: return "trace";
    case LogLevel::debug: return "debug";
    case LogLevel::info: return "info";
    case LogLevel::warn: return "warn";
    case LogLevel::error: return "error";
  }
  return "?";
}

Result<NodeConfig, ConfigError> parse_node_config(std::string_view text,
                                                  std::string_view source_name) {
  std::string source(source_name);
  if (text.size() > kConfigFileBytesMax) {
    return make_error(ConfigError::too_large,
                      source + ": over " + std::to_string(kConfigFileBytesMax) + " bytes");
  }
  try {
    toml::table root = parse_toml(text);
    return read_config(root, source);
  } catch (const toml::parse_error& error) {
    return make_error(ConfigError::syntax, source + " line " +
                                               std::to_string(error.source().begin.line) + ": " +
                                               std::string(error.description()));
  }
}

}  // namespace mesh::node
