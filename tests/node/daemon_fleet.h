// A fleet of real meshnode processes on loopback for the daemon's
// integration tests: each node its own address (127.0.<subnet>.<i+1>), key,
// data dir, config and log, a real TLS listener (meshnode-standin listen)
// standing in for its VPN, and a stand-in VPN service process. Outcomes are
// read the way an operator's meshctl reads them: from each node's store,
// opened read-only (the verdict snapshot the daemon stored, its records).
// Everything started is killed and reaped by the destructor.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "record/keys.h"
#include "record/roster.h"
#include "tests/node/spawned_process.h"
#include "tests/tools/run_process.h"

namespace mesh::test {

// Roster parameters for a fleet that shows verdicts within seconds.
Parameters fast_parameters();

class DaemonFleet {
 public:
  // `subnet` keeps test programs that run at once on distinct addresses.
  DaemonFleet(std::uint32_t count, std::uint32_t subnet, const Parameters& params = fast_parameters());
  ~DaemonFleet();
  DaemonFleet(const DaemonFleet&) = delete;
  DaemonFleet& operator=(const DaemonFleet&) = delete;

  std::uint32_t size() const { return static_cast<std::uint32_t>(ids_.size()); }
  const ServerId& id(std::uint32_t i) const { return ids_[i]; }
  std::string address(std::uint32_t i) const;
  std::uint16_t gossip_port() const { return gossip_port_; }
  std::uint16_t api_port() const { return api_port_; }
  // Bearer tokens every node of the fleet accepts.
  const std::string& read_token() const { return read_token_; }
  const std::string& admin_token() const { return admin_token_; }
  std::string data_dir(std::uint32_t i) const;
  std::string config_path(std::uint32_t i) const;
  std::string log_text(std::uint32_t i) const;
  const std::string& dir() const { return dir_.path(); }
  const KeyPair& operator_key() const { return operator_key_; }
  const KeyPair& node_key(std::uint32_t i) const { return keys_.at(i); }

  // Listeners, services and daemons of every node.
  void start_all();
  void start_daemon(std::uint32_t i);
  // SIGTERM; the exit status (nullopt: still running after `timeout`).
  std::optional<int> stop_daemon(std::uint32_t i, std::chrono::milliseconds timeout);
  void kill_daemon(std::uint32_t i);  // SIGKILL, reaped
  bool daemon_running(std::uint32_t i) const;
  pid_t daemon_pid(std::uint32_t i) const;  // REQUIRES: daemon_running(i)
  void signal_daemon(std::uint32_t i, int signal);
  void stop_listener(std::uint32_t i);
  void start_listener(std::uint32_t i);
  // Replaces the block file of node i's stand-in listener: `reset <ip>` or
  // `drop <ip>` lines (tools/standin/block_list.h), re-read by the listener
  // within a moment; "" lifts every block. Listeners start with none.
  void write_block_file(std::uint32_t i, const std::string& text);
  void stop_service(std::uint32_t i);
  void start_service(std::uint32_t i);

  // Signs `roster` (its version as the record's seq) into the roster file
  // every node reads at start and on SIGHUP.
  void write_roster(const Roster& roster);
  const Roster& roster() const { return roster_; }

  // What node i's daemon stored: server id -> status, from its verdict
  // snapshot; empty before the first one.
  std::map<ServerId, std::string> statuses(std::uint32_t i) const;
  // The members of `route` in rotation at node i.
  std::vector<ServerId> rotation(std::uint32_t i, const std::string& route) const;
  // Every record node i stores, as raw bytes, sorted.
  std::vector<Bytes> records(std::uint32_t i) const;
  // A state value of node i's store.
  std::optional<Bytes> state(std::uint32_t i, std::string_view key) const;
  std::uint64_t roster_version_held(std::uint32_t i) const;

  // True when every node in `nodes` shows `server` with `status`.
  bool all_show(const std::vector<std::uint32_t>& nodes, const ServerId& server,
                const std::string& status) const;
  std::vector<std::uint32_t> all_but(std::uint32_t i) const;
  std::vector<std::uint32_t> everyone() const;
  // Polls `done` every 200 ms for at most `limit`.
  static bool wait(const std::function<bool()>& done, std::chrono::milliseconds limit);

 private:
  void write_config(std::uint32_t i);

  TempDir dir_;
  std::uint32_t subnet_;
  std::uint16_t gossip_port_ = 0;
  std::uint16_t listener_port_ = 0;
  std::uint16_t api_port_ = 0;
  std::string read_token_ = "fleet-read-token-0123456789";
  std::string admin_token_ = "fleet-admin-token-0123456789";
  std::vector<ServerId> ids_;
  std::vector<KeyPair> keys_;
  KeyPair operator_key_;
  Roster roster_;
  std::vector<std::unique_ptr<SpawnedProcess>> daemons_, listeners_, services_;
};

}  // namespace mesh::test
