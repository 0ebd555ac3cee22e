// meshnode as a program: --version, --check-config, and every way start-up
// can fail, each a clear message and an exit code (node/daemon.h), with
// nothing written to a data dir that is not the node's, and nothing at all
// when what fails is not the store.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "node/agent/state_codec.h"
#include "storage/store.h"
#include "storage/txn.h"
#include "storage/layout.h"
#include "tests/node/daemon_fleet.h"
#include "tests/node/net_util.h"
#include "tests/tools/run_process.h"

namespace mesh::test {
namespace {

const std::string kMeshnode = MESHNODE_BINARY_DIR "/node/meshnode";

ProcessResult meshnode(const std::vector<std::string>& args) {
  std::vector<std::string> argv{kMeshnode};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_process(argv);
}

void append(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::app);
  out << text;
}

bool contains(const std::string& text, const std::string& fragment) {
  return text.find(fragment) != std::string::npos;
}

// Every file under `dir`, by name, with its bytes: two equal maps mean
// nothing was created, removed or written there (LMDB's lock file too).
std::map<std::string, std::string> dir_contents(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    files[entry.path().string()] = entry.is_regular_file() ? read_text(entry.path().string()) : "(not a file)";
  }
  return files;
}

TEST_CASE("meshnode --version, --check-config, and usage errors") {
  auto version = meshnode({"--version"});
  CHECK(version.exit_code == 0);
  CHECK(contains(version.out, "meshnode 0."));
  CHECK(meshnode({}).exit_code == 2);
  CHECK(meshnode({"--bogus"}).exit_code == 2);
  DaemonFleet fleet(1, 44);
  auto ok = meshnode({"--check-config", fleet.config_path(0)});
  CHECK(ok.exit_code == 0);
  CHECK(contains(ok.out, "ok"));
  append(fleet.config_path(0), "[probe]\n");  // a table twice: TOML syntax error
  auto bad = meshnode({"--check-config", fleet.config_path(0)});
  CHECK(bad.exit_code == 2);
  CHECK(contains(bad.err, fleet.config_path(0)));
  CHECK(meshnode({"--config", fleet.config_path(0)}).exit_code == 2);
  auto missing = meshnode({"--config", fleet.dir() + "/nowhere.toml"});
  CHECK(missing.exit_code == 2);
  CHECK(contains(missing.err, "nowhere.toml"));
}

// Lines of `meshnode --check-config` output that start with `mark` ("ok",
// "WARN", "FAIL") for check `what`.
std::string check_line(const std::string& out, const std::string& mark, const std::string& what) {
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with(mark) && line.find("  " + what + ": ") != std::string::npos) return line;
  }
  return "";
}

std::string replaced_in(const std::string& text, const std::string& from, const std::string& to) {
  std::string out = text;
  const auto at = out.find(from);
  REQUIRE(at != std::string::npos);
  return out.replace(at, from.size(), to);
}

TEST_CASE("--check-config checks everything a start would, one line each, and writes nothing") {
  DaemonFleet fleet(2, 67);
  const std::string path = fleet.config_path(0);
  const std::string config = read_text(path);
  auto check_with = [&](const std::string& text) {
    std::ofstream(fleet.dir() + "/check.toml", std::ios::trunc) << text;
    return meshnode({"--check-config", fleet.dir() + "/check.toml"});
  };
  SUBCASE("a ready node: every check ok") {
    auto ready = meshnode({"--check-config", path});
    CHECK(ready.exit_code == 0);
    for (const char* what : {"config", "key file", "roster", "roster entry", "gossip endpoint", "gossip listen",
                             "api token file", "api listen", "data dir"}) {
      CHECK_MESSAGE(!check_line(ready.out, "ok", what).empty(), what << " in\n" << ready.out);
    }
    CHECK(contains(check_line(ready.out, "ok", "key file"), public_key_to_hex(fleet.node_key(0).public_key)));
    CHECK(contains(check_line(ready.out, "ok", "roster"), "version 1, 2 servers, signed by operator_key " +
                                                            public_key_to_hex(fleet.operator_key().public_key)));
    CHECK(contains(ready.out, "is ready to start"));
  }
  SUBCASE("the issue's case: a token file and a data dir that do not exist are not ok") {
    ::rmdir(fleet.data_dir(0).c_str());
    auto result = check_with(replaced_in(config, fleet.dir() + "/api-tokens", fleet.dir() + "/no-tokens"));
    CHECK(result.exit_code == 2);
    CHECK(contains(check_line(result.out, "FAIL", "api token file"), "no-tokens"));
    CHECK(contains(check_line(result.out, "FAIL", "data dir"), "does not exist"));
    CHECK(contains(result.out, "not ready: 2 checks failed"));
  }
  SUBCASE("a token file others may read is a warning, one others may write a failure") {
    ::chmod((fleet.dir() + "/api-tokens").c_str(), 0644);
    auto readable = meshnode({"--check-config", path});
    CHECK(readable.exit_code == 0);
    CHECK(contains(check_line(readable.out, "WARN", "api token file"), "mode 0644: others may read it"));
    ::chmod((fleet.dir() + "/api-tokens").c_str(), 0666);
    auto writable = meshnode({"--check-config", path});
    CHECK(writable.exit_code == 2);
    CHECK(contains(check_line(writable.out, "FAIL", "api token file"), "mode 0666"));
  }
  SUBCASE("another node's key file: the roster entry fails, both keys named") {
    auto result = check_with(replaced_in(config, fleet.dir() + "/n1/node.key", fleet.dir() + "/n2/node.key"));
    CHECK(result.exit_code == 2);
    const std::string line = check_line(result.out, "FAIL", "roster entry");
    CHECK(contains(line, public_key_to_hex(fleet.node_key(0).public_key)));
    CHECK(contains(line, public_key_to_hex(fleet.node_key(1).public_key)));
  }
  SUBCASE("a roster signed with another key, and one damaged") {
    fleet.write_roster(fleet.roster(), generate_key_pair().secret_key);
    auto other = meshnode({"--check-config", path});
    CHECK(other.exit_code == 2);
    CHECK(contains(check_line(other.out, "FAIL", "roster"), "not signed by operator_key"));
    const std::string text = "garbage";
    fleet.write_roster_bytes(Bytes(text.begin(), text.end()));
    auto damaged = meshnode({"--check-config", path});
    CHECK(damaged.exit_code == 2);
    CHECK(contains(check_line(damaged.out, "FAIL", "roster"), "damaged, or altered after signing"));
  }
  SUBCASE("a [gossip] listen port other than the roster's: flagged") {
    const std::string listen = fleet.address(0) + ":" + std::to_string(fleet.gossip_port());
    auto result = check_with(replaced_in(config, "listen = \"" + listen + "\"",
                                         "listen = \"" + fleet.address(0) + ":" + std::to_string(free_port(fleet.address(0))) + "\""));
    CHECK(result.exit_code == 0);
    CHECK(contains(check_line(result.out, "WARN", "gossip endpoint"), "ports should match"));
  }
  SUBCASE("a port in use fails") {
    SpawnedProcess squatter({MESHNODE_BINARY_DIR "/tools/standin/meshnode-standin", "listen", "--address",
                             fleet.address(0) + ":" + std::to_string(fleet.api_port())},
                            fleet.dir() + "/squatter.log", fleet.dir() + "/squatter.log");
    REQUIRE(wait_for_port(fleet.address(0), fleet.api_port(), std::chrono::seconds(10)));
    auto result = meshnode({"--check-config", path});
    CHECK(result.exit_code == 2);
    CHECK(!check_line(result.out, "FAIL", "api listen").empty());
  }
  SUBCASE("the issue's other case: root's data.mdb in the service user's dir, with the chown to run") {
    if (::geteuid() != 0) return;  // needs root to make another user's dir
    REQUIRE(::chown(fleet.data_dir(0).c_str(), 65534, 65534) == 0);
    std::ofstream(fleet.data_dir(0) + "/data.mdb") << "";
    auto result = meshnode({"--check-config", path});
    CHECK(result.exit_code == 2);
    const std::string line = check_line(result.out, "FAIL", "data dir");
    CHECK(contains(line, "data.mdb' is owned by root (uid 0)"));
    CHECK(contains(line, "`chown -R nobody:nogroup " + fleet.data_dir(0) + "`"));
  }
  SUBCASE("a node that ran: its store is named, and the data dir's roster serves without the file") {
    fleet.start_daemon(0);
    REQUIRE(DaemonFleet::wait([&] { return contains(fleet.log_text(0), "info verdicts: "); }, std::chrono::seconds(20)));
    REQUIRE(fleet.stop_daemon(0, std::chrono::seconds(5)).has_value());
    ::unlink(fleet.roster_path().c_str());
    const std::string data = read_text(fleet.data_dir(0) + "/data.mdb");
    auto result = meshnode({"--check-config", path});
    CHECK(result.exit_code == 0);
    CHECK(contains(check_line(result.out, "ok", "roster"), "the data dir's roster: version 1"));
    CHECK(contains(check_line(result.out, "ok", "data dir"), "holds node 'n1''s store"));
    // The store is read, not written (LMDB's lock file notes a reader, as for meshctl).
    CHECK(read_text(fleet.data_dir(0) + "/data.mdb") == data);
    CHECK(dir_contents(fleet.data_dir(0)).size() == 2);
  }
  CHECK(dir_contents(fleet.data_dir(1)).empty());
}

TEST_CASE("config errors stop meshnode before anything starts, naming the key") {
  DaemonFleet fleet(1, 45);
  const std::string path = fleet.config_path(0);
  for (const auto& [extra, key] : std::vector<std::pair<std::string, std::string>>{
           {"colour = \"red\"\n", "colour"},
           {"[log]\nformat = \"xml\"\n", "format"},
           {"[volume]\ncap_bytes_per_day = -1\n", "cap_bytes_per_day"},
           {"[api]\nlisten = \"0.0.0.0:4717\"\n", "not a loopback address"},
           {"[api]\ntls_cert_file = \"/x.pem\"\n", "go together"},
           {"[api]\nport = 1\n", "port"}}) {
    CAPTURE(extra);
    const std::string copy = fleet.dir() + "/bad.toml";
    std::string text = read_text(path);
    text = text.substr(0, text.find("[api]"));  // the cases below bring their own
    // Top-level keys go before the first table.
    text = extra.starts_with("[") ? text + extra : extra + text;
    std::ofstream(copy, std::ios::trunc) << text;
    auto result = meshnode({"--config", copy});
    CHECK(result.exit_code == 2);
    CHECK(contains(result.err, key));
  }
  StoreOptions options;
  options.read_only = true;
  CHECK(!Store::open(fleet.data_dir(0), options).ok());  // nothing was created
}

TEST_CASE("start-up failures: data dir missing, foreign, another node's; key file; address in use") {
  DaemonFleet fleet(2, 46);
  auto start = [&](std::uint32_t i) { return meshnode({"--config", fleet.config_path(i)}); };
  // The data dir does not exist.
  ::rmdir(fleet.data_dir(0).c_str());
  auto missing = start(0);
  CHECK(missing.exit_code == 1);
  CHECK(contains(missing.err, "does not exist"));
  // A directory holding something else.
  ::mkdir(fleet.data_dir(0).c_str(), 0700);
  std::ofstream(fleet.data_dir(0) + "/notes.txt") << "not a store";
  auto foreign = start(0);
  CHECK(foreign.exit_code == 1);
  CHECK(contains(foreign.err, "not a meshnode store"));
  ::unlink((fleet.data_dir(0) + "/notes.txt").c_str());
  // Node n1's store, then n2 pointed at it.
  {
    SpawnedProcess n1({kMeshnode, "--config", fleet.config_path(0)}, fleet.dir() + "/n1.log",
                      fleet.dir() + "/n1.log");
    REQUIRE(wait_for_port(fleet.address(0), fleet.gossip_port(), std::chrono::seconds(20)));
    n1.signal(SIGTERM);
    REQUIRE(n1.wait_exit(std::chrono::seconds(5)).has_value());
  }
  const std::string n2_config = fleet.config_path(1);
  std::string text = read_text(n2_config);
  const auto at = text.find(fleet.data_dir(1));
  text.replace(at, fleet.data_dir(1).size(), fleet.data_dir(0));
  std::ofstream(fleet.dir() + "/shared.toml", std::ios::trunc) << text;
  auto shared = meshnode({"--config", fleet.dir() + "/shared.toml"});
  CHECK(shared.exit_code == 1);
  CHECK(contains(shared.err, "belongs to node 'n1'"));
  // A key file others can read.
  ::chmod((fleet.dir() + "/n2/node.key").c_str(), 0644);
  auto key = start(1);
  CHECK(key.exit_code == 1);
  CHECK(contains(key.err, "key file"));
  ::chmod((fleet.dir() + "/n2/node.key").c_str(), 0600);
  // The gossip address taken by another process.
  SpawnedProcess squatter({MESHNODE_BINARY_DIR "/tools/standin/meshnode-standin", "listen",
                           "--address", fleet.address(1) + ":" + std::to_string(fleet.gossip_port())},
                          fleet.dir() + "/squatter.log", fleet.dir() + "/squatter.log");
  REQUIRE(wait_for_port(fleet.address(1), fleet.gossip_port(), std::chrono::seconds(10)));
  auto taken = start(1);
  CHECK(taken.exit_code == 1);
  CHECK(contains(taken.err, "[gossip] listen"));
}

// A start that fails after the key loaded (a port taken, the API's tokens
// or certificate) fails before the store is opened: the data dir is as it
// was, empty or holding the node's store, and no boot counter was taken.
TEST_CASE("a start that fails on a port, the API's tokens or its certificate writes nothing to the data dir") {
  DaemonFleet fleet(1, 64);
  const std::string config = read_text(fleet.config_path(0));
  std::ofstream(fleet.dir() + "/garbage.pem") << "-----BEGIN CERTIFICATE-----\nnot base64\n";
  const std::string garbage_cert = "tls_cert_file = \"" + fleet.dir() + "/garbage.pem\"\ntls_key_file = \"" +
                                   fleet.dir() + "/garbage.pem\"\n";
  auto start_with = [&](const std::string& text) {
    std::ofstream(fleet.dir() + "/variant.toml", std::ios::trunc) << text;
    return meshnode({"--config", fleet.dir() + "/variant.toml"});
  };
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string text = config;
    const auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    return text.replace(at, from.size(), to);
  };
  auto fail_every_way = [&] {
    const auto before = dir_contents(fleet.data_dir(0));
    auto no_tokens = start_with(replaced(fleet.dir() + "/api-tokens", fleet.dir() + "/no-tokens"));
    CHECK(no_tokens.exit_code == 1);
    CHECK(contains(no_tokens.err, "[api] token_file"));
    auto bad_cert = start_with(config + garbage_cert);
    CHECK(bad_cert.exit_code == 1);
    CHECK(contains(bad_cert.err, "[api] tls_cert_file"));
    for (const auto& [port, section] :
         {std::pair{fleet.api_port(), "[api] listen"}, std::pair{fleet.gossip_port(), "[gossip] listen"}}) {
      CAPTURE(section);
      const std::string address = fleet.address(0) + ":" + std::to_string(port);
      SpawnedProcess squatter({MESHNODE_BINARY_DIR "/tools/standin/meshnode-standin", "listen", "--address", address},
                              fleet.dir() + "/squatter.log", fleet.dir() + "/squatter.log");
      REQUIRE(wait_for_port(fleet.address(0), port, std::chrono::seconds(10)));
      auto taken = start_with(config);
      CHECK(taken.exit_code == 1);
      CHECK(contains(taken.err, section));
    }
    CHECK(dir_contents(fleet.data_dir(0)) == before);
  };
  SUBCASE("a fresh node: the data dir stays empty") {
    fail_every_way();
    CHECK(dir_contents(fleet.data_dir(0)).empty());
  }
  SUBCASE("a node that ran before: its store is untouched, its boot counter where it was") {
    fleet.start_daemon(0);
    REQUIRE(wait_for_port(fleet.address(0), fleet.gossip_port(), std::chrono::seconds(20)));
    REQUIRE(fleet.stop_daemon(0, std::chrono::seconds(5)).has_value());
    const auto held = fleet.state(0, kBootCounterKey);
    REQUIRE(held.has_value());
    REQUIRE(held->size() == 8);
    std::uint64_t boot = 0;
    for (std::uint8_t b : *held) boot = boot << 8 | b;
    REQUIRE(contains(fleet.log_text(0), "boot " + std::to_string(boot) + ","));
    REQUIRE(!dir_contents(fleet.data_dir(0)).empty());
    fail_every_way();
    CHECK(fleet.state(0, kBootCounterKey) == held);  // where it was
    // And the next start that holds takes a larger one.
    fleet.start_daemon(0);
    CHECK(DaemonFleet::wait(
        [&] {
          const auto now = fleet.state(0, kBootCounterKey);
          return now.has_value() && now->size() == 8 && *now > *held;  // big-endian: bytes order as numbers
        },
        std::chrono::seconds(20)));
  }
}

#if MESHNODE_OPENSSL_ON_DEMAND
TEST_CASE("an API set up for HTTPS where OpenSSL does not load stops meshnode with the reason") {
  // A lean meshnode loads libssl.so.3 only when its API serves HTTPS
  // (node/api/tls_library.h); here the loader first finds a file that is
  // not a shared object, then one without OpenSSL's functions.
  DaemonFleet fleet(1, 63);
  TempDir libraries;
  std::ofstream(libraries.file("libssl.so.3")) << "not a shared object\n";
  append(fleet.config_path(0), "tls_cert_file = \"" + fleet.dir() + "/cert.pem\"\ntls_key_file = \"" +
                                   fleet.dir() + "/key.pem\"\n");
  auto start_with = [&](const std::string& library_dir) {
    return run_process({"/usr/bin/env", "LD_LIBRARY_PATH=" + library_dir, kMeshnode, "--config",
                        fleet.config_path(0)});
  };
  const auto before = dir_contents(fleet.data_dir(0));
  auto garbage = start_with(libraries.path());
  CHECK(garbage.exit_code == 1);
  CHECK(contains(garbage.err, "[api] HTTPS needs OpenSSL 3 (libssl.so.3), which does not load: " +
                                  libraries.file("libssl.so.3")));
  auto empty = start_with(MESHNODE_NOT_LIBSSL_DIR);
  CHECK(empty.exit_code == 1);
  CHECK(contains(empty.err, "[api] HTTPS needs OpenSSL 3: libssl.so.3 has no BIO_ctrl"));
  CHECK(dir_contents(fleet.data_dir(0)) == before);
}
#endif

TEST_CASE("a stored agent value that does not decode stops meshnode with its key named") {
  DaemonFleet fleet(1, 47);
  {
    SpawnedProcess n1({kMeshnode, "--config", fleet.config_path(0)}, fleet.dir() + "/n1.log",
                      fleet.dir() + "/n1.log");
    REQUIRE(wait_for_port(fleet.address(0), fleet.gossip_port(), std::chrono::seconds(20)));
    n1.signal(SIGTERM);
    REQUIRE(n1.wait_exit(std::chrono::seconds(5)).has_value());
  }
  {
    auto store = Store::open(fleet.data_dir(0), StoreOptions{});
    REQUIRE(store.ok());
    auto txn = (*store)->begin_write();
    REQUIRE(txn.ok());
    REQUIRE(txn->put_state(agent::streak_key("n9"), Bytes{1, 2, 3}).ok());
    REQUIRE(txn->commit().ok());
  }
  auto result = meshnode({"--config", fleet.config_path(0)});
  CHECK(result.exit_code == 1);
  CHECK(contains(result.err, "probe/n9"));
}

// The case: meshnode started once as root in the service user's
// data dir left root's data.mdb behind, and the service user's next start
// failed with a bare `mdb_env_open: Permission denied`. Now the root start
// is refused before it writes, naming the owner.
TEST_CASE("started as root in a data dir another user owns, meshnode refuses before writing, naming the owner") {
  if (::geteuid() != 0) {
    MESSAGE("skipped: needs root (CI runs as root)");
    return;
  }
  DaemonFleet fleet(1, 65);
  REQUIRE(::chown(fleet.data_dir(0).c_str(), 65534, 65534) == 0);
  auto result = meshnode({"--config", fleet.config_path(0)});
  CHECK(result.exit_code == 1);
  CHECK(contains(result.err, "is owned by nobody (uid 65534), and meshnode runs as root"));
  CHECK(contains(result.err, "run meshnode as nobody"));
  CHECK(dir_contents(fleet.data_dir(0)).empty());
}

TEST_CASE("an API token file others may write stops the start; one others may read is a warning") {
  DaemonFleet fleet(1, 66);
  const std::string tokens = fleet.dir() + "/api-tokens";
  ::chmod(tokens.c_str(), 0666);
  auto refused = meshnode({"--config", fleet.config_path(0)});
  CHECK(refused.exit_code == 1);
  CHECK(contains(refused.err, "has mode 0666: group or others may write it"));
  CHECK(dir_contents(fleet.data_dir(0)).empty());
  ::chmod(tokens.c_str(), 0644);
  fleet.start_daemon(0);
  CHECK(DaemonFleet::wait([&] { return contains(fleet.log_text(0), "warn api: token file '" + tokens +
                                                                        "' has mode 0644: others may read it"); },
                          std::chrono::seconds(20)));
}

}  // namespace
}  // namespace mesh::test
