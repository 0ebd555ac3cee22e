// node/config.h: loading the config file from disk (and refusing what is
// not a small regular file), and printing the effective config.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <future>
#include <string>

#include "node/config.h"
#include "tests/node/config_fixture.h"
#include "tests/tools/run_process.h"

using namespace mesh;
using namespace mesh::node;
using namespace mesh::test;

TEST_CASE("describe_config prints the effective config, and it parses back to the same") {
  NodeConfig config = required_only();
  std::string printed = describe_config(config);
  CHECK(contains(printed, "listen = \"0.0.0.0:4716\"\n"));
  CHECK(contains(printed, "tls_every = 1\n"));
  CHECK(contains(printed, "connect_timeout_ms = 3500\n"));
  CHECK(contains(printed, "listener = \"\"\n"));
  CHECK(parse(printed).value() == config);

  config.data_dir = "/srv/mesh \"quoted\" \\ dir";
  config.gossip.listen = {"::", 4800};
  config.gossip.source_address = "2001:db8::5";
  config.gossip.queue_bytes_max = 1u << 30;
  config.probe.tls_every = 5;
  config.self_check.listener = Endpoint{"2001:db8::9", 8443};
  config.self_check.listener_tls = false;
  config.self_check.service = "exec:/usr/local/bin/check \"vpn\"";
  config.volume.cap_bytes_per_day = 1ull << 40;
  config.log = {LogFormat::json, LogLevel::warn};
  config.panel.kind = PanelKind::marzban;
  config.panel.url = "https://panel.example.net:8443/base";
  config.panel.dry_run = true;
  config.panel.candidates = {"de-fra-1", "nl-ams-1"};
  config.panel.hosts = {{"de-fra-1", {"5f1c0a2b-0000-4000-8000-000000000001", "DE \"Frankfurt\""}}};
  config.alerts.webhook_url = "http://127.0.0.1:9000/hook";
  config.alerts.webhook_secret_file = "/etc/meshnode/hook-secret";
  config.alerts.telegram_token_file = "/etc/meshnode/telegram-token";
  config.alerts.telegram_chat_id = "-1001234";
  config.alerts.candidates = {"de-fra-1"};
  auto again = parse(describe_config(config));
  REQUIRE_MESSAGE(again.ok(), again.message());
  CHECK(*again == config);
}

TEST_CASE("load_node_config: the example file, a missing file, a FIFO, a directory, a huge file") {
  auto example =
      load_node_config(std::string(MESHNODE_SOURCE_DIR) + "/docs/examples/meshnode.toml");
  REQUIRE_MESSAGE(example.ok(), example.message());
  CHECK(*example == required_only());

  mesh::test::TempDir dir;
  auto missing = load_node_config(dir.file("absent.toml"));
  REQUIRE(!missing.ok());
  CHECK(missing.code() == ConfigError::unreadable);
  CHECK(missing.message() ==
        "config " + dir.file("absent.toml") + ": cannot be opened (No such file or directory)");

  std::string fifo = dir.file("fifo.toml");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // Bounded: if the load blocked on the FIFO, the test fails instead of hanging
  // (opening the write end then releases it).
  auto pending = std::async(std::launch::async, [&] { return load_node_config(fifo); });
  bool finished = pending.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  if (!finished) std::ofstream(fifo) << "";
  REQUIRE_MESSAGE(finished, "load_node_config blocked on a FIFO");
  auto from_fifo = pending.get();
  REQUIRE(!from_fifo.ok());
  CHECK(from_fifo.code() == ConfigError::unreadable);
  CHECK(contains(from_fifo.message(), fifo + ": is a FIFO, not a regular file"));

  auto from_dir = load_node_config(dir.path());
  REQUIRE(!from_dir.ok());
  CHECK(contains(from_dir.message(), dir.path() + ": is a directory"));

  std::string huge = dir.file("huge.toml");
  std::ofstream(huge) << kBase << std::string(kConfigFileBytesMax, '#');
  auto too_large = load_node_config(huge);
  REQUIRE(!too_large.ok());
  CHECK(too_large.code() == ConfigError::too_large);
  CHECK(contains(too_large.message(), huge + ": over 1048576 bytes"));

  std::string bad = dir.file("bad.toml");
  std::ofstream(bad) << edited("tls_every = 1", "tls_every = 0");
  auto from_bad = load_node_config(bad);
  REQUIRE(!from_bad.ok());
  CHECK(from_bad.message() ==
        "config " + bad + " line 9: [probe] tls_every: must be 1..1000, got 0");
}

TEST_CASE("load_node_config: a file the daemon may not read names the path") {
  if (::geteuid() == 0) return;  // root reads mode 000 files anyway
  mesh::test::TempDir dir;
  std::string path = dir.file("secret.toml");
  std::ofstream(path) << kBase;
  REQUIRE(::chmod(path.c_str(), 0) == 0);
  auto config = load_node_config(path);
  REQUIRE(!config.ok());
  CHECK(config.code() == ConfigError::unreadable);
  CHECK(contains(config.message(), "config " + path + ": cannot be opened (Permission denied)"));
}
