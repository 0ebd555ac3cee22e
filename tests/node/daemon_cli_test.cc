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

#include "node/agent/state_codec.h"
#include "storage/store.h"
#include "storage/txn.h"
#include "tests/node/daemon_fleet.h"
#include "tests/node/net_util.h"

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

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
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
    std::ifstream in(path);
    std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
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
  std::ifstream in(n2_config);
  std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
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
    REQUIRE(contains(fleet.log_text(0), "boot 1,"));
    REQUIRE(!dir_contents(fleet.data_dir(0)).empty());
    fail_every_way();
    // And the next start that holds takes boot counter 2.
    fleet.start_daemon(0);
    CHECK(DaemonFleet::wait([&] { return contains(fleet.log_text(0), "boot 2,"); }, std::chrono::seconds(20)));
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

TEST_CASE("a roster file that is not a signed roster is refused in the log; the node keeps running") {
  DaemonFleet fleet(1, 48);
  std::ofstream(fleet.dir() + "/roster.signed", std::ios::trunc) << "not a record";
  SpawnedProcess n1({kMeshnode, "--config", fleet.config_path(0)}, fleet.dir() + "/n1.log",
                    fleet.dir() + "/n1.log");
  CHECK(n1.wait_for_err("refused", std::chrono::seconds(20)));
  CHECK(n1.running());
  n1.signal(SIGTERM);
  auto status = n1.wait_exit(std::chrono::seconds(5));
  REQUIRE(status.has_value());
  CHECK(WEXITSTATUS(*status) == 0);
}

}  // namespace
}  // namespace mesh::test
