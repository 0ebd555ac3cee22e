// Shared by the node config tests: a small valid config whose line
// numbers the tests quote, and ways to edit it and expect an error.
#pragma once

#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "node/config.h"

namespace mesh::test {

using node::ConfigError;
using node::NodeConfig;

inline constexpr const char* kOperatorHex =
    "db995fe25169d141cab9bbba92baa01f9f2e1ece7df4cb2ac05190f37fcc1f9d";

// The three required keys and every table, each with one key set, so that
// edits can name a table's line. Line numbers matter: tests quote them.
inline constexpr const char* kBase = R"(node_id = "de-fra-1"
key_file = "/etc/meshnode/node.key"
operator_key = "db995fe25169d141cab9bbba92baa01f9f2e1ece7df4cb2ac05190f37fcc1f9d"

[gossip]
connect_timeout_ms = 5000

[probe]
tls_every = 1

[self_check]
listener_tls = true

[volume]
cap_bytes_per_day = 0

[log]
level = "info"
)";

inline bool contains(const std::string& text, const std::string& fragment) {
  return text.find(fragment) != std::string::npos;
}

// kBase with `from` replaced by `to` (REQUIRES: `from` occurs once).
inline std::string edited(const std::string& from, const std::string& to) {
  std::string text = kBase;
  std::size_t at = text.find(from);
  REQUIRE_MESSAGE(at != std::string::npos, from);
  REQUIRE(text.find(from, at + 1) == std::string::npos);
  return text.replace(at, from.size(), to);
}

// kBase with `line` added at the end of table `[table]` ("" = top level).
inline std::string with_key(const std::string& table, const std::string& line) {
  if (table.empty()) return line + "\n" + kBase;
  std::string text = kBase;
  std::size_t at = text.find("[" + table + "]\n");
  REQUIRE(at != std::string::npos);
  at = text.find('\n', at) + 1;
  return text.insert(at, line + "\n");
}

// kBase with `key = value` in `[table]`: replacing kBase's own line for that
// key, else added (each table of kBase has one key, right after its header).
inline std::string with_value(const std::string& table, const std::string& key,
                              const std::string& value) {
  std::string text = kBase;
  std::size_t at = text.find("[" + table + "]\n");
  REQUIRE(at != std::string::npos);
  at = text.find('\n', at) + 1;
  if (text.compare(at, key.size() + 3, key + " = ") == 0) {
    text.erase(at, text.find('\n', at) + 1 - at);
  }
  return text.insert(at, key + " = " + value + "\n");
}

inline Result<NodeConfig, ConfigError> parse(const std::string& text) {
  return node::parse_node_config(text, "config");
}

inline void expect_error(const std::string& text, ConfigError code, const std::string& fragment) {
  auto config = parse(text);
  REQUIRE_MESSAGE(!config.ok(), text);
  CHECK_MESSAGE(config.code() == code, config.message());
  CHECK_MESSAGE(contains(config.message(), fragment), config.message());
}

inline std::string read_text(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

inline NodeConfig required_only() {
  NodeConfig config;
  config.node_id = "de-fra-1";
  config.key_file = "/etc/meshnode/node.key";
  config.operator_key = public_key_from_hex(kOperatorHex).value();
  return config;
}

}  // namespace mesh::test
