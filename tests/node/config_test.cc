// node/config.h: parsing the daemon's config file, its example, and every
// way it can be wrong (docs/CONFIG.md, "The node config file").
#include "node/config.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "node/service_check.h"
#include "tests/node/config_fixture.h"

using namespace mesh;
using namespace mesh::node;
using namespace mesh::test;

TEST_CASE("the example config parses, and says exactly the defaults") {
  auto config = parse(read_text(std::string(MESHNODE_SOURCE_DIR) + "/docs/examples/meshnode.toml"));
  REQUIRE_MESSAGE(config.ok(), config.message());
  CHECK(*config == required_only());
  CHECK(config->gossip.listen == Endpoint{"0.0.0.0", kDefaultGossipPort});
  CHECK(config->data_dir == "/var/lib/meshnode");
  CHECK(config->roster_file == "/etc/meshnode/roster.signed");
  CHECK(!config->self_check.listener.has_value());
}

TEST_CASE("the three required keys alone take every default") {
  std::string text =
      std::string("node_id = \"de-fra-1\"\nkey_file = \"/etc/meshnode/node.key\"\n") +
      "operator_key = \"" + kOperatorHex + "\"\n";
  auto config = parse(text);
  REQUIRE_MESSAGE(config.ok(), config.message());
  CHECK(*config == required_only());
  CHECK(parse(kBase).value() == required_only());
}

TEST_CASE("the default ports: gossip 4716, the API one above") {
  CHECK(kDefaultGossipPort == 4716);
  CHECK(kDefaultApiPort == 4717);
  CHECK(kDefaultProbePort == 443);
}

TEST_CASE("a missing required key is named") {
  for (const char* key : {"node_id", "key_file", "operator_key"}) {
    std::string text = kBase;
    std::size_t at = text.find(std::string(key) + " = ");
    text.erase(at, text.find('\n', at) + 1 - at);
    expect_error(text, ConfigError::missing_key, std::string("missing required key '") + key + "'");
  }
}

TEST_CASE("an unknown key is refused with its line, at the top level and in every table") {
  expect_error(with_key("", "nodeid = \"x\""), ConfigError::unknown_key,
               "config line 1: nodeid: unknown key (known at the top level: node_id,");
  struct Case {
    const char* table;
    int line;  // where with_key puts it
  };
  for (Case c : {Case{"gossip", 6}, Case{"probe", 9}, Case{"self_check", 12}, Case{"volume", 15},
                 Case{"log", 18}}) {
    CAPTURE(c.table);
    expect_error(with_key(c.table, "frame_bytes_max = 1"), ConfigError::unknown_key,
                 "config line " + std::to_string(c.line) + ": [" + c.table +
                     "] frame_bytes_max: unknown key (known in [" + c.table + "]: ");
  }
  expect_error(std::string(kBase) + "\n[api]\nport = 4717\n", ConfigError::unknown_key,
               "config line 21: [api] port: unknown key");
  expect_error(with_key("probe", "[probe.extra]"), ConfigError::unknown_key,
               "[probe] extra: unknown key");
}

TEST_CASE("the error message names the line and the key") {
  auto config = parse(edited("tls_every = 1", "tls_every = 0"));
  REQUIRE(!config.ok());
  CHECK(config.message() == "config line 9: [probe] tls_every: must be 1..1000, got 0");
}

TEST_CASE("a value of the wrong type is refused") {
  struct Case {
    std::string table, line, fragment;
  };
  const std::vector<Case> cases = {
      {"", "data_dir = 5", "data_dir: must be a string, got an integer"},
      {"", "roster_file = [\"a\"]", "roster_file: must be a string, got an array"},
      {"gossip", "listen = 4716", "[gossip] listen: must be a string, got an integer"},
      {"gossip", "idle_timeout_ms = \"300000\"", "[gossip] idle_timeout_ms: must be an integer"},
      {"gossip", "queue_bytes_max = 8.5", "must be an integer, got a float"},
      {"probe", "concurrent_max = true", "[probe] concurrent_max: must be an integer, got a bool"},
      {"probe", "source_address = 0", "[probe] source_address: must be a string"},
      {"self_check", "service = false", "[self_check] service: must be a string"},
      {"self_check", "exec_timeout_ms = 1979-05-27", "must be an integer, got a date"},
      {"log", "format = 1", "[log] format: must be a string"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.line);
    expect_error(with_key(c.table, c.line), ConfigError::wrong_type, c.fragment);
  }
  expect_error(with_value("volume", "cap_bytes_per_day", "\"0\""), ConfigError::wrong_type,
               "config line 15: [volume] cap_bytes_per_day: must be an integer, got a string");
  expect_error(edited("listener_tls = true", "listener_tls = \"yes\""), ConfigError::wrong_type,
               "[self_check] listener_tls: must be true or false, got a string");
  expect_error(edited("node_id = \"de-fra-1\"", "node_id = 1"), ConfigError::wrong_type,
               "config line 1: node_id: must be a string");
  std::string required = std::string(kBase).substr(0, std::string(kBase).find("\n\n"));
  expect_error(required + "\nprobe = 3\n", ConfigError::wrong_type,
               "config line 4: probe: must be a table ([probe]), got an integer");
}

TEST_CASE("every number is checked against its range") {
  struct Case {
    std::string table, key;
    std::int64_t below, above;  // just outside the range
  };
  const std::vector<Case> cases = {
      {"gossip", "connect_timeout_ms", 99, 60'001},
      {"gossip", "idle_timeout_ms", 9'999, 86'400'001},
      {"gossip", "queue_bytes_max", 1'049'855, 1'073'741'825},
      {"gossip", "backoff_min_ms", 99, 3'600'001},
      {"gossip", "backoff_max_ms", 99, 3'600'001},
      {"probe", "tls_every", 0, 1001},
      {"probe", "connect_timeout_ms", 3'499, 60'001},
      {"probe", "tls_timeout_ms", 999, 60'001},
      {"probe", "concurrent_max", 0, 1025},
      {"self_check", "exec_timeout_ms", 99, 60'001},
      {"volume", "cap_bytes_per_day", -1, 1'099'511'627'777},
  };
  for (const Case& c : cases) {
    for (std::int64_t value : {c.below, c.above}) {
      std::string line = c.key + " = " + std::to_string(value);
      CAPTURE(line);
      std::string text = with_value(c.table, c.key, std::to_string(value));
      expect_error(text, ConfigError::bad_value, "[" + c.table + "] " + c.key + ": must be ");
      expect_error(text, ConfigError::bad_value, "got " + std::to_string(value));
    }
  }
  // Just inside, both ends.
  CHECK(parse(with_value("probe", "connect_timeout_ms", "3500")).ok());
  CHECK(parse(with_value("probe", "tls_every", "1000")).ok());
  CHECK(parse(with_value("gossip", "connect_timeout_ms", "100")).ok());
  CHECK(parse(with_value("gossip", "queue_bytes_max", "1049856")).ok());
  CHECK(parse(edited("cap_bytes_per_day = 0", "cap_bytes_per_day = 1099511627776")).ok());
}

TEST_CASE("backoff_min_ms may not pass backoff_max_ms; the volume cap is 0 or at least 1 MiB") {
  expect_error(with_key("gossip", "backoff_min_ms = 5000\nbackoff_max_ms = 4000"),
               ConfigError::bad_value,
               "[gossip] backoff_min_ms: must be <= backoff_max_ms (4000), got 5000");
  expect_error(with_key("gossip", "backoff_max_ms = 500"), ConfigError::bad_value,
               "must be <= backoff_max_ms (500), got 1000");
  CHECK(parse(with_key("gossip", "backoff_min_ms = 4000\nbackoff_max_ms = 4000")).ok());
  expect_error(edited("cap_bytes_per_day = 0", "cap_bytes_per_day = 5"), ConfigError::bad_value,
               "[volume] cap_bytes_per_day: must be 0 (the roster's cap) or 1048576..");
  auto config = parse(edited("cap_bytes_per_day = 0", "cap_bytes_per_day = 1048576"));
  REQUIRE(config.ok());
  CHECK(effective_volume_cap_bytes(*config, 200ull << 20) == 1ull << 20);
  CHECK(effective_volume_cap_bytes(*config, 1ull << 19) == 1ull << 19);
  CHECK(effective_volume_cap_bytes(required_only(), 200ull << 20) == 200ull << 20);
}

TEST_CASE("the gossip listen endpoint: an IP literal, default port 4716") {
  auto listen = [](const std::string& value) {
    return parse(with_key("gossip", "listen = \"" + value + "\""));
  };
  CHECK(listen("0.0.0.0")->gossip.listen == Endpoint{"0.0.0.0", 4716});
  CHECK(listen("[::]:5000")->gossip.listen == Endpoint{"::", 5000});
  CHECK(listen("192.0.2.7:4716")->gossip.listen == Endpoint{"192.0.2.7", 4716});
  for (const char* bad : {"node.example.net:4716", "0.0.0.0:0", "0.0.0.0:70000", "2001:db8::1:4716",
                          "", "0.0.0.0:", "[::1]x"}) {
    CAPTURE(bad);
    auto config = listen(bad);
    REQUIRE(!config.ok());
    CHECK(config.code() == ConfigError::bad_value);
    CHECK_MESSAGE(contains(config.message(), "config line 6: [gossip] listen: must be IP:port"),
                  config.message());
  }
}

TEST_CASE("the self-check listener: \"\" or host:port, port 443 by default") {
  auto listener = [](const std::string& value) {
    return parse(with_key("self_check", "listener = \"" + value + "\""));
  };
  CHECK(!listener("")->self_check.listener.has_value());
  CHECK(*listener("127.0.0.5:8443")->self_check.listener == Endpoint{"127.0.0.5", 8443});
  CHECK(*listener("vpn.example.com")->self_check.listener == Endpoint{"vpn.example.com", 443});
  expect_error(with_key("self_check", "listener = \"bad host:1\""), ConfigError::bad_value,
               "[self_check] listener: must be \"\" (the roster's probe endpoint) or host:port");
}

TEST_CASE("a source address is \"\" or an IP literal") {
  for (const char* table : {"gossip", "probe"}) {
    for (const char* good : {"", "192.0.2.1", "2001:db8::1"}) {
      CHECK(parse(with_key(table, std::string("source_address = \"") + good + "\"")).ok());
    }
    for (const char* bad :
         {"host.example", "[2001:db8::1]", "192.0.2.1:80", "256.1.1.1", "01.2.3.4", " 192.0.2.1"}) {
      CAPTURE(bad);
      expect_error(with_key(table, std::string("source_address = \"") + bad + "\""),
                   ConfigError::bad_value,
                   std::string("[") + table + "] source_address: must be \"\" (any) or a local IP");
    }
  }
}

TEST_CASE("the service spec: systemd:UNIT, process:NAME or exec:COMMAND") {
  for (const char* good : {"", "systemd:xray.service", "process:xray", "exec:/usr/bin/check --fast",
                           "process:meshnode-standi"}) {
    CAPTURE(good);
    auto config = parse(with_key("self_check", std::string("service = \"") + good + "\""));
    REQUIRE_MESSAGE(config.ok(), config.message());
    CHECK(config->self_check.service == good);
  }
  for (const char* bad :
       {"systemd:", "process:", "exec:", "exec:   ", "xray", "docker:xray", "systemd:x ray",
        "process:a\\tb", "Systemd:xray", ":xray", "systemd:a/b", "process:/usr/bin/xray"}) {
    CAPTURE(bad);
    expect_error(with_key("self_check", std::string("service = \"") + bad + "\""),
                 ConfigError::bad_value, "config line 12: [self_check] service: must be \"\", ");
  }
  std::string longest = "exec:" + std::string(1019, 'x');
  CHECK(parse(with_key("self_check", "service = \"" + longest + "\"")).ok());
  expect_error(with_key("self_check", "service = \"" + longest + "x\""), ConfigError::bad_value,
               "[self_check] service: must be");
}

TEST_CASE("a service spec the config accepts, node/service_check.h accepts too") {
  for (const char* spec : {"", "systemd:xray.service", "process:xray", "exec:/bin/true",
                           "exec:pgrep -x xray >/dev/null", "process:meshnode-standin"}) {
    CAPTURE(spec);
    REQUIRE(parse(with_key("self_check", std::string("service = \"") + spec + "\"")).ok());
    auto parsed = parse_service_spec(spec);
    CHECK_MESSAGE(parsed.ok(), parsed.message());
  }
  for (const char* spec : {"systemd:", "process:a/b", "process:a b", "exec:", "docker:x"}) {
    CAPTURE(spec);
    CHECK(!parse_service_spec(spec).ok());
    CHECK(!parse(with_key("self_check", std::string("service = \"") + spec + "\"")).ok());
  }
}

TEST_CASE("node_id, operator_key and the paths are checked") {
  for (const char* bad : {"DE-FRA-1", "operator", "", "-x", "de fra"}) {
    CAPTURE(bad);
    expect_error(edited("node_id = \"de-fra-1\"", std::string("node_id = \"") + bad + "\""),
                 ConfigError::bad_value,
                 "config line 1: node_id: '" + std::string(bad) + "' is not a server id");
  }
  std::string key_line = std::string("operator_key = \"") + kOperatorHex + "\"";
  for (std::string bad : {std::string(63, 'a'), std::string(65, 'a'), std::string(64, 'g'),
                          std::string(64, '0'), std::string("0x") + std::string(62, 'a')}) {
    CAPTURE(bad);
    expect_error(edited(key_line, "operator_key = \"" + bad + "\""), ConfigError::bad_value,
                 "config line 3: operator_key: must be the operator's public key, 64 hex");
  }
  expect_error(edited("key_file = \"/etc/meshnode/node.key\"", "key_file = \"\""),
               ConfigError::bad_value, "config line 2: key_file: must be a non-empty path");
  expect_error(with_key("", "data_dir = \"\""), ConfigError::bad_value, "data_dir: must be a");
  expect_error(with_key("", "roster_file = \"a\\nb\""), ConfigError::bad_value, "roster_file:");
  expect_error(with_key("", "data_dir = \"" + std::string(4097, 'a') + "\""),
               ConfigError::bad_value, "data_dir: longer than 4096 bytes");
}

TEST_CASE("log format and level are one of their names") {
  auto config = parse(with_key("log", "format = \"json\"") + "");
  REQUIRE(config.ok());
  CHECK(config->log.format == LogFormat::json);
  CHECK(parse(edited("level = \"info\"", "level = \"trace\""))->log.level == LogLevel::trace);
  expect_error(with_key("log", "format = \"xml\""), ConfigError::bad_value,
               "[log] format: must be one of text, json, got 'xml'");
  expect_error(edited("level = \"info\"", "level = \"INFO\""), ConfigError::bad_value,
               "[log] level: must be one of trace, debug, info, warn, error, got 'INFO'");
}

TEST_CASE("TOML syntax errors carry the line") {
  expect_error(edited("tls_every = 1", "tls_every = = 10"), ConfigError::syntax,
               "config line 9: ");
  expect_error(with_key("probe", "tls_every = 1"), ConfigError::syntax, "config line 10: ");
  // A non-ASCII character where TOML allows none (common/toml.h): refused
  // before toml++ parses; in a string or a comment it is fine.
  expect_error(edited("tls_every = 1", "tls_every = 1 й"), ConfigError::syntax,
               "config line 9: a non-ASCII character outside a string or comment");
  CHECK(parse(edited("tls_every = 1", "tls_every = 1 # каждые 5")).ok());
  expect_error(std::string(kConfigFileBytesMax + 1, '#'), ConfigError::too_large,
               "over 1048576 bytes");
}

TEST_CASE("[panel] and [alerts]: off by default, checked when set") {
  auto defaults = parse(kBase);
  REQUIRE(defaults.ok());
  CHECK(defaults->panel.kind == PanelKind::none);
  CHECK_FALSE(defaults->alerts.enabled());
  auto remnawave = parse(std::string(kBase) +
                         "\n[panel]\nkind = \"remnawave\"\nurl = \"https://panel.example.net\"\n"
                         "candidates = [\"de-fra-1\"]\n[panel.hosts]\n\"de-fra-1\" = [\"DE 1\"]\n");
  REQUIRE_MESSAGE(remnawave.ok(), remnawave.message());
  CHECK(remnawave->panel.kind == PanelKind::remnawave);
  CHECK(remnawave->panel.hosts.at("de-fra-1") == std::vector<std::string>{"DE 1"});
  CHECK(remnawave->panel.changes_per_minute == 10);
  expect_error(std::string(kBase) + "\n[panel]\nkind = \"3x-ui\"\n", ConfigError::bad_value, "[panel] kind");
  expect_error(std::string(kBase) + "\n[panel]\nkind = \"marzban\"\n", ConfigError::bad_value,
               "needs url and credentials_file");
  expect_error(std::string(kBase) + "\n[panel]\nurl = \"ftp://panel\"\n", ConfigError::bad_value, "[panel] url");
  expect_error(std::string(kBase) + "\n[panel]\nurl = \"https://user:pw@panel\"\n", ConfigError::bad_value,
               "[panel] url");
  // The reason, as meshctl's --api gives it (common/http_url.h).
  expect_error(std::string(kBase) + "\n[panel]\nurl = \"https://2001:db8::1/api\"\n", ConfigError::bad_value,
               "IPv6 address goes in brackets");
  expect_error(std::string(kBase) + "\n[panel]\nurl = \"https://panel:\"\n", ConfigError::bad_value,
               "the port must be 1..65535");
  expect_error(std::string(kBase) + "\n[panel]\nchanges_per_minute = 0\n", ConfigError::bad_value,
               "[panel] changes_per_minute");
  expect_error(std::string(kBase) + "\n[panel]\ncandidates = [\"Not An Id\"]\n", ConfigError::bad_value,
               "[panel] candidates");
  expect_error(std::string(kBase) + "\n[panel]\ndryrun = true\n", ConfigError::unknown_key, "[panel] dryrun");
  expect_error(std::string(kBase) + "\n[panel.hosts]\n\"de-fra-1\" = []\n", ConfigError::wrong_type,
               "[panel.hosts] de-fra-1");
  auto alerts = parse(std::string(kBase) + "\n[alerts]\nwebhook_url = \"https://hooks.example.net/m\"\n"
                                           "webhook_secret_file = \"/etc/meshnode/hook-secret\"\n");
  REQUIRE_MESSAGE(alerts.ok(), alerts.message());
  CHECK(alerts->alerts.enabled());
  expect_error(std::string(kBase) + "\n[alerts]\nwebhook_url = \"https://hooks.example.net/m\"\n",
               ConfigError::bad_value, "go together");
  expect_error(std::string(kBase) + "\n[alerts]\ntelegram_chat_id = \"-100\"\n", ConfigError::bad_value,
               "go together");
  expect_error(std::string(kBase) + "\n[alerts]\nflap_changes = 1\n", ConfigError::bad_value,
               "[alerts] flap_changes");
}

TEST_CASE("[api]: loopback by default, off with \"\", HTTPS only elsewhere unless said insecure") {
  auto defaults = parse(kBase);
  REQUIRE(defaults.ok());
  REQUIRE(defaults->api.listen.has_value());
  CHECK(format_endpoint(*defaults->api.listen) == "127.0.0.1:4717");
  auto off = parse(std::string(kBase) + "\n[api]\nlisten = \"\"\n");
  REQUIRE(off.ok());
  CHECK(!off->api.listen);
  CHECK(parse(std::string(kBase) + "\n[api]\nlisten = \"[::1]\"\n").ok());
  expect_error(std::string(kBase) + "\n[api]\nlisten = \"0.0.0.0:4717\"\n", ConfigError::bad_value,
               "[api] listen: '0.0.0.0:4717' is not a loopback address");
  CHECK(parse(std::string(kBase) +
              "\n[api]\nlisten = \"0.0.0.0:4717\"\ntls_cert_file = \"/c.pem\"\ntls_key_file = \"/k.pem\"\n")
            .ok());
  CHECK(parse(std::string(kBase) + "\n[api]\nlisten = \"10.0.0.5:4717\"\ninsecure_plaintext = true\n").ok());
  expect_error(std::string(kBase) + "\n[api]\ntls_key_file = \"/k.pem\"\n", ConfigError::bad_value,
               "go together");
  expect_error(std::string(kBase) + "\n[api]\nlisten = \"api.example.com:4717\"\n", ConfigError::bad_value,
               "[api] listen: must be");
  expect_error(std::string(kBase) + "\n[api]\ntoken_file = \"\"\n", ConfigError::bad_value,
               "[api] token_file");
  CHECK(defaults->api.threads == 2);
  auto one = parse(std::string(kBase) + "\n[api]\nthreads = 1\n");
  REQUIRE(one.ok());
  CHECK(one->api.threads == 1);
  expect_error(std::string(kBase) + "\n[api]\nthreads = 0\n", ConfigError::bad_value, "[api] threads");
  expect_error(std::string(kBase) + "\n[api]\nthreads = 17\n", ConfigError::bad_value, "[api] threads");
}
