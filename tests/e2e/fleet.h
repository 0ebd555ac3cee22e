// The end-to-end fleet: real meshnode processes, each on its own host of a
// TestNetwork (its own network namespace and address), with a real TLS
// listener on port 443 (meshnode-standin listen) standing in for its VPN, a
// stand-in VPN service process, a key, a data dir, a config and a log; one
// signed roster with several routes. Everything the suite asserts is read
// through the nodes' HTTP API, as an operator's panel reads it.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "record/keys.h"
#include "record/roster.h"
#include "tests/e2e/netns.h"
#include "tests/node/spawned_process.h"

namespace mesh::test::e2e {

using Json = nlohmann::json;
using ServerMap = std::map<ServerId, Json>;  // GET /v1/servers by id

inline constexpr std::uint16_t kGossipPort = 4716;
inline constexpr std::uint16_t kApiPort = 4717;
inline constexpr std::uint16_t kListenerPort = 443;

class Fleet {
 public:
  // `count` nodes in countries DE, NL, FI in turn (n1 DE, n2 NL, n3 FI, n4
  // DE, ...); routes "all" (every server) and "first" (n1, n2, n3).
  Fleet(std::uint32_t count, const Parameters& params, const std::string& dir);
  ~Fleet();
  Fleet(const Fleet&) = delete;
  Fleet& operator=(const Fleet&) = delete;

  TestNetwork& net() { return net_; }
  std::uint32_t size() const { return static_cast<std::uint32_t>(ids_.size()); }
  const ServerId& id(std::uint32_t i) const { return ids_.at(i); }
  std::uint32_t index_of(const ServerId& id) const;
  const std::string& country(std::uint32_t i) const { return countries_.at(i); }
  static std::string address(std::uint32_t i) { return TestNetwork::address(i); }
  const std::string& dir() const { return dir_; }
  std::string data_dir(std::uint32_t i) const { return dir_ + "/" + ids_.at(i) + "/data"; }
  std::string key_file(std::uint32_t i) const { return dir_ + "/" + ids_.at(i) + "/node.key"; }
  const std::string& admin_token() const { return admin_token_; }

  // The nodes of the current roster, and those of them whose daemon runs.
  std::vector<std::uint32_t> members() const;
  std::vector<std::uint32_t> running() const;
  std::vector<std::uint32_t> running_except(const std::vector<std::uint32_t>& left_out) const;

  // A new node (host, key, config) in `country`, not yet in the roster.
  std::uint32_t add_node(const std::string& country);
  // Node i's roster entry: its address, listener, SNI, key, `routes`.
  ServerEntry entry_of(std::uint32_t i, std::vector<std::string> routes) const;

  // The roster every node starts with, and the signed record of a roster.
  const Roster& roster() const { return roster_; }
  Bytes sign_roster(const Roster& roster) const;
  // Signs `roster` into the roster file nodes read at start; the members
  // follow it.
  void write_roster_file(const Roster& roster);
  // The roster the fleet is now on (after PUT /v1/roster): members follow it.
  void adopt_roster(const Roster& roster) { roster_ = roster; }

  void start_all();  // every member's listener, service and daemon
  void start_node(std::uint32_t i);  // node i's listener, service and daemon
  void stop_node(std::uint32_t i);   // all three (the daemon by SIGTERM)
  void start_daemon(std::uint32_t i);
  void stop_daemon(std::uint32_t i);  // SIGTERM; REQUIRES it exits within 10 s
  void kill_daemon(std::uint32_t i);  // SIGKILL, reaped
  bool daemon_running(std::uint32_t i) const;
  void start_service(std::uint32_t i);
  void stop_service(std::uint32_t i);

  // GET `path` from node i's API with the read token: the JSON body of a
  // 200 answer, or nullopt (no answer, or another status).
  std::optional<Json> get(std::uint32_t i, const std::string& path) const;
  std::optional<ServerMap> servers(std::uint32_t i) const;
  // PUT `body` with the admin token; the status (0: no answer).
  unsigned put(std::uint32_t i, const std::string& path, const Bytes& body) const;
  // meshnode_gossip_drops_total{reason=...} at node i (nullopt: no answer).
  std::optional<std::uint64_t> drops(std::uint32_t i, const std::string& reason) const;
  // Waits until node i's API answers, at most `limit`.
  bool api_up(std::uint32_t i, std::chrono::milliseconds limit) const;

  std::string log_path(std::uint32_t i) const { return dir_ + "/" + ids_.at(i) + "/meshnode.log"; }

 private:
  void write_config(std::uint32_t i);
  void start_listener(std::uint32_t i);
  std::string spawn_log(std::uint32_t i, const char* what) const;

  std::string dir_;
  TestNetwork net_;
  std::string read_token_ = "e2e-read-token-0123456789abcdef";
  std::string admin_token_ = "e2e-admin-token-0123456789abcdef";
  KeyPair operator_key_;
  Roster roster_;
  std::vector<ServerId> ids_;
  std::vector<std::string> countries_;
  std::vector<KeyPair> keys_;
  std::vector<std::unique_ptr<SpawnedProcess>> daemons_, listeners_, services_;
};

}  // namespace mesh::test::e2e
