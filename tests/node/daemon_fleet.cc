#include "tests/node/daemon_fleet.h"

#include <doctest/doctest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "node/agent/state_codec.h"
#include "node/api/tokens.h"
#include "record/envelope.h"
#include "storage/store.h"
#include "storage/txn.h"
#include "tests/node/net_util.h"
#include "tests/tools/failure_notes.h"
#include "tests/tools/fleet_programs.h"

namespace mesh::test {
namespace {

void write_file(const std::string& path, const std::string& text) { REQUIRE(write_text_file(path, text)); }

// Opens node i's store read-only, as meshctl does, and runs `fn` on a snapshot.
template <class Fn>
void with_store(const std::string& data_dir, Fn&& fn) {
  StoreOptions options;
  options.read_only = true;
  auto store = Store::open(data_dir, options);
  if (!store) return;  // not created yet
  auto txn = (*store)->begin_read();
  if (!txn) return;
  fn(*txn);
}

}  // namespace

Parameters fast_parameters() {
  Parameters params;
  params.heartbeat_interval_ms = 2'000;
  params.probe_interval_ms = 2'000;
  params.stale_after_ms = 6'000;
  params.fail_streak = 3;
  params.quorum_witnesses = 2;
  return params;
}

DaemonFleet::DaemonFleet(std::uint32_t count, std::uint32_t subnet, const Parameters& params)
    : subnet_(subnet), operator_key_(generate_key_pair()) {
  gossip_port_ = free_port(address(0));
  listener_port_ = free_port(address(0));
  api_port_ = free_port(address(0));
  write_file(dir() + "/api-tokens", "read " + api::token_hash_hex(read_token_) + "\nadmin " +
                                        api::token_hash_hex(admin_token_) + "\n");
  ::chmod((dir() + "/api-tokens").c_str(), 0600);  // others may not read it (docs/CONFIG.md)
  roster_.version = 1;
  roster_.params = params;
  roster_.routes = {Route{"all", "Every server"}, Route{"first", "The first of each country"}};
  for (std::uint32_t i = 0; i < count; ++i) {
    ids_.push_back("n" + std::to_string(i + 1));
    keys_.push_back(generate_key_pair());
    ::mkdir((dir() + "/" + ids_[i]).c_str(), 0700);
    ::mkdir(data_dir(i).c_str(), 0700);
    REQUIRE(write_secret_key_file(dir() + "/" + ids_[i] + "/node.key", keys_[i].secret_key).ok());
    ServerEntry server;
    server.id = ids_[i];
    server.country = kFleetCountries[i % 3];
    server.probe = Endpoint{address(i), listener_port_};
    server.sni = "www." + ids_[i] + ".test.example";
    server.gossip = Endpoint{address(i), gossip_port_};
    server.key = keys_[i].public_key;
    server.routes = i < 3 ? std::vector<std::string>{"all", "first"} : std::vector<std::string>{"all"};
    roster_.servers.push_back(server);
  }
  write_roster(roster_);
  for (std::uint32_t i = 0; i < count; ++i) write_config(i);
  daemons_.resize(count);
  listeners_.resize(count);
  services_.resize(count);
}

DaemonFleet::~DaemonFleet() {
  // Printed only if the test case fails (tests/tools/failure_notes.h): each
  // daemon's log tail, whether it still ran, and whether its API port was
  // listening (and how many connections waited to be accepted there).
  for (std::uint32_t i = 0; i < size(); ++i) {
    const std::string log = log_text(i);
    std::string state = "daemon not started";
    if (daemons_[i] != nullptr) {
      const std::optional<int> status = daemons_[i]->wait_exit(std::chrono::milliseconds(0));
      state = !status                ? "daemon running"
              : WIFSIGNALED(*status) ? "daemon ended by signal " + std::to_string(WTERMSIG(*status))
                                     : "daemon exited with status " + std::to_string(WEXITSTATUS(*status));
    }
    keep_for_failure(ids_[i] + " at the end of the test case",
                     state + "; API " + address(i) + ":" + std::to_string(api_port_) + " " +
                         tcp_listen_state(address(i), api_port_));
    if (!log.empty()) keep_for_failure(ids_[i] + "'s log, its last lines", last_lines(log, 30));
  }
}

std::string DaemonFleet::address(std::uint32_t i) const {
  return "127.0." + std::to_string(subnet_) + "." + std::to_string(i + 1);
}
std::string DaemonFleet::data_dir(std::uint32_t i) const { return dir() + "/" + ids_[i] + "/data"; }
std::string DaemonFleet::config_path(std::uint32_t i) const {
  return dir() + "/" + ids_[i] + "/meshnode.toml";
}
std::string DaemonFleet::log_text(std::uint32_t i) const {
  return read_text(dir() + "/" + ids_[i] + "/meshnode.log");
}

void DaemonFleet::write_roster(const Roster& roster) { write_roster(roster, operator_key_.secret_key); }

void DaemonFleet::write_roster(const Roster& roster, const SecretKey& signer) {
  roster_ = roster;
  write_roster_bytes(encode_signed_record(RecordKind::roster, kOperatorOrigin, roster.version, 1'700'000'000'000,
                                          encode_roster_payload(roster), signer));
}

void DaemonFleet::write_roster_bytes(const Bytes& raw) {
  write_file(roster_path(), std::string(raw.begin(), raw.end()));
}

void DaemonFleet::write_config(std::uint32_t i) {
  const std::string node_dir = dir() + "/" + ids_[i];
  write_file(config_path(i),
             "node_id = \"" + ids_[i] + "\"\n"
             "key_file = \"" + node_dir + "/node.key\"\n"
             "operator_key = \"" + public_key_to_hex(operator_key_.public_key) + "\"\n"
             "data_dir = \"" + data_dir(i) + "\"\n"
             "roster_file = \"" + dir() + "/roster.signed\"\n"
             "[gossip]\nlisten = \"" + address(i) + ":" + std::to_string(gossip_port_) + "\"\n"
             "source_address = \"" + address(i) + "\"\nbackoff_min_ms = 200\nbackoff_max_ms = 2000\n"
             "[probe]\ntls_every = 1\nconnect_timeout_ms = 3500\ntls_timeout_ms = 3000\n"
             "source_address = \"" + address(i) + "\"\n"
             "[self_check]\nservice = \"process:vpn-t" + std::to_string(subnet_) + "-" +
                 ids_[i] + "\"\n"
             "[api]\nlisten = \"" + address(i) + ":" + std::to_string(api_port_) + "\"\n"
             "token_file = \"" + dir() + "/api-tokens\"\n");
}

void DaemonFleet::start_all() {
  for (std::uint32_t i = 0; i < size(); ++i) {
    start_listener(i);
    start_service(i);
  }
  for (std::uint32_t i = 0; i < size(); ++i) start_daemon(i);
}

void DaemonFleet::start_daemon(std::uint32_t i) {
  const std::string log = dir() + "/" + ids_[i] + "/meshnode.log";
  daemons_[i] = std::make_unique<SpawnedProcess>(
      std::vector<std::string>{kMeshnodeProgram, "--config", config_path(i)}, log, log);
}

std::optional<int> DaemonFleet::stop_daemon(std::uint32_t i, std::chrono::milliseconds timeout) {
  REQUIRE(daemons_[i] != nullptr);
  daemons_[i]->signal(SIGTERM);
  auto status = daemons_[i]->wait_exit(timeout);
  if (status) daemons_[i].reset();
  return status;
}

void DaemonFleet::kill_daemon(std::uint32_t i) { daemons_[i].reset(); }
bool DaemonFleet::daemon_running(std::uint32_t i) const { return daemons_[i] && daemons_[i]->running(); }
pid_t DaemonFleet::daemon_pid(std::uint32_t i) const { return daemons_[i]->pid(); }
void DaemonFleet::signal_daemon(std::uint32_t i, int signal) { daemons_[i]->signal(signal); }

void DaemonFleet::start_listener(std::uint32_t i) {
  const std::string log = dir() + "/" + ids_[i] + "/standin.log";
  listeners_[i] = std::make_unique<SpawnedProcess>(
      std::vector<std::string>{kStandinProgram, "listen", "--address",
                               address(i) + ":" + std::to_string(listener_port_), "--block-file",
                               dir() + "/" + ids_[i] + "/blocks"},
      log, log);
  REQUIRE(wait_for_port(address(i), listener_port_, std::chrono::seconds(10)));
}
void DaemonFleet::stop_listener(std::uint32_t i) { listeners_[i].reset(); }

void DaemonFleet::write_block_file(std::uint32_t i, const std::string& text) {
  // Renamed into place, so the listener never reads half a file.
  const std::string path = dir() + "/" + ids_[i] + "/blocks";
  write_file(path + ".new", text);
  REQUIRE(std::rename((path + ".new").c_str(), path.c_str()) == 0);
}

void DaemonFleet::start_service(std::uint32_t i) {
  const std::string log = dir() + "/" + ids_[i] + "/standin.log";
  const std::string name = "vpn-t" + std::to_string(subnet_) + "-" + ids_[i];
  services_[i] = std::make_unique<SpawnedProcess>(
      std::vector<std::string>{kStandinProgram, "service", "--name", name}, log, log);
}
void DaemonFleet::stop_service(std::uint32_t i) { services_[i].reset(); }

std::map<ServerId, std::string> DaemonFleet::statuses(std::uint32_t i) const {
  std::map<ServerId, std::string> out;
  with_store(data_dir(i), [&](const TxnReader& txn) {
    auto stored = txn.get_state(agent::kVerdictsKey);
    if (!stored || !stored->has_value()) return;
    const Bytes& bytes = **stored;
    auto json = nlohmann::json::parse(bytes.begin(), bytes.end());
    for (const auto& server : json.at("servers")) out[server.at("id")] = server.at("status");
  });
  return out;
}

std::vector<ServerId> DaemonFleet::rotation(std::uint32_t i, const std::string& route) const {
  std::vector<ServerId> members;
  with_store(data_dir(i), [&](const TxnReader& txn) {
    auto stored = txn.get_state(agent::kVerdictsKey);
    if (!stored || !stored->has_value()) return;
    const Bytes& bytes = **stored;
    const auto json = nlohmann::json::parse(bytes.begin(), bytes.end());
    for (const auto& r : json.at("routes")) {
      if (r.at("id") == route) members = r.at("members").get<std::vector<ServerId>>();
    }
  });
  return members;
}

std::vector<Bytes> DaemonFleet::records(std::uint32_t i) const {
  std::vector<Bytes> out;
  with_store(data_dir(i), [&](const TxnReader& txn) {
    if (auto roster = txn.get_roster(); roster && roster->has_value()) out.push_back(**roster);
    (void)txn.for_each_record(
        [&](std::uint8_t, std::string_view, ByteView raw) { out.emplace_back(raw.begin(), raw.end()); });
  });
  // Byte order through string_view: g++ 12 misreads std::vector's operator<
  // here (a -Wstringop-overread false positive).
  std::sort(out.begin(), out.end(), [](const Bytes& a, const Bytes& b) {
    return std::string_view(reinterpret_cast<const char*>(a.data()), a.size()) <
           std::string_view(reinterpret_cast<const char*>(b.data()), b.size());
  });
  return out;
}

std::optional<Bytes> DaemonFleet::state(std::uint32_t i, std::string_view key) const {
  std::optional<Bytes> out;
  with_store(data_dir(i), [&](const TxnReader& txn) {
    if (auto value = txn.get_state(key); value && value->has_value()) out = **value;
  });
  return out;
}

std::uint64_t DaemonFleet::roster_version_held(std::uint32_t i) const {
  std::uint64_t version = 0;
  with_store(data_dir(i), [&](const TxnReader& txn) {
    if (auto roster = txn.get_roster(); roster && roster->has_value()) {
      if (auto envelope = decode_envelope(**roster)) version = envelope->seq;
    }
  });
  return version;
}

bool DaemonFleet::all_show(const std::vector<std::uint32_t>& nodes, const ServerId& server,
                           const std::string& status) const {
  return std::all_of(nodes.begin(), nodes.end(), [&](std::uint32_t i) {
    auto shown = statuses(i);
    auto it = shown.find(server);
    return it != shown.end() && it->second == status;
  });
}

std::vector<std::uint32_t> DaemonFleet::all_but(std::uint32_t i) const {
  std::vector<std::uint32_t> out;
  for (std::uint32_t k = 0; k < size(); ++k) {
    if (k != i) out.push_back(k);
  }
  return out;
}

std::vector<std::uint32_t> DaemonFleet::everyone() const {
  std::vector<std::uint32_t> out;
  for (std::uint32_t k = 0; k < size(); ++k) out.push_back(k);
  return out;
}

bool DaemonFleet::wait(const std::function<bool()>& done, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    if (done()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

}  // namespace mesh::test
