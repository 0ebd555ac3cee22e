#include "tests/e2e/fleet.h"
#include "tests/e2e/volume_cap.h"

#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "node/api/tokens.h"
#include "record/envelope.h"
#include "tests/node/http_client.h"
#include "tests/tools/fleet_programs.h"

namespace mesh::test::e2e {
namespace {

void write_file(const std::string& path, const std::string& text) {
  if (!write_text_file(path, text)) throw std::runtime_error("cannot write " + path);
}

}  // namespace

Fleet::Fleet(std::uint32_t count, const Parameters& params, const std::string& dir)
    : dir_(dir), net_(0, dir), operator_key_(generate_key_pair()) {
  write_file(dir_ + "/api-tokens", "read " + api::token_hash_hex(read_token_) + "\nadmin " +
                                       api::token_hash_hex(admin_token_) + "\n");
  roster_.version = 1;
  roster_.params = params;
  // A cap that fits the suite's intervals at any hour (volume_cap.h).
  roster_.params.volume_bytes_per_day_max = suite_volume_cap(params);
  roster_.routes = {Route{"all", "Every server"}, Route{"first", "The first of each country"}};
  for (std::uint32_t i = 0; i < count; ++i) {
    const std::uint32_t node = add_node(kFleetCountries[i % 3]);
    roster_.servers.push_back(
        entry_of(node, node < 3 ? std::vector<std::string>{"all", "first"} : std::vector<std::string>{"all"}));
  }
  write_roster_file(roster_);
}

Fleet::~Fleet() = default;

std::uint32_t Fleet::add_node(const std::string& country) {
  const std::uint32_t i = net_.add_host();
  ids_.push_back("n" + std::to_string(i + 1));
  countries_.push_back(country);
  keys_.push_back(generate_key_pair());
  ::mkdir((dir_ + "/" + ids_[i]).c_str(), 0700);
  ::mkdir(data_dir(i).c_str(), 0700);
  if (!write_secret_key_file(key_file(i), keys_[i].secret_key).ok()) {
    throw std::runtime_error("cannot write " + key_file(i));
  }
  write_config(i);
  daemons_.resize(size());
  listeners_.resize(size());
  services_.resize(size());
  return i;
}

ServerEntry Fleet::entry_of(std::uint32_t i, std::vector<std::string> routes) const {
  ServerEntry server;
  server.id = ids_.at(i);
  server.country = countries_.at(i);
  server.probe = Endpoint{address(i), kListenerPort};
  server.sni = "www." + ids_[i] + ".e2e.example";
  server.gossip = Endpoint{address(i), kGossipPort};
  server.key = keys_[i].public_key;
  server.routes = std::move(routes);
  return server;
}

std::uint32_t Fleet::index_of(const ServerId& id) const {
  auto it = std::find(ids_.begin(), ids_.end(), id);
  if (it == ids_.end()) throw std::runtime_error("no node " + id);
  return static_cast<std::uint32_t>(it - ids_.begin());
}

std::vector<std::uint32_t> Fleet::members() const {
  std::vector<std::uint32_t> out;
  for (const ServerEntry& server : roster_.servers) out.push_back(index_of(server.id));
  return out;
}

std::vector<std::uint32_t> Fleet::running() const { return running_except({}); }

std::vector<std::uint32_t> Fleet::running_except(const std::vector<std::uint32_t>& left_out) const {
  std::vector<std::uint32_t> out;
  for (std::uint32_t i : members()) {
    if (daemon_running(i) && std::find(left_out.begin(), left_out.end(), i) == left_out.end()) {
      out.push_back(i);
    }
  }
  return out;
}

Bytes Fleet::sign_roster(const Roster& roster) const {
  return encode_signed_record(RecordKind::roster, kOperatorOrigin, roster.version,
                              1'700'000'000'000 + roster.version, encode_roster_payload(roster),
                              operator_key_.secret_key);
}

void Fleet::write_roster_file(const Roster& roster) {
  roster_ = roster;
  const Bytes raw = sign_roster(roster);
  write_file(dir_ + "/roster.signed.new", std::string(raw.begin(), raw.end()));
  std::rename((dir_ + "/roster.signed.new").c_str(), (dir_ + "/roster.signed").c_str());
}

void Fleet::write_config(std::uint32_t i) {
  const std::string node_dir = dir_ + "/" + ids_[i];
  const std::string a = address(i);
  // TLS on every probe, so an SNI block shows at the next probes (the
  // default spaces TLS out: docs/CONFIG.md, tls_every). Plain HTTP API on
  // the private test network, with the warning the node logs for it.
  write_file(node_dir + "/meshnode.toml",
             "node_id = \"" + ids_[i] + "\"\n"
             "key_file = \"" + key_file(i) + "\"\n"
             "operator_key = \"" + public_key_to_hex(operator_key_.public_key) + "\"\n"
             "data_dir = \"" + data_dir(i) + "\"\n"
             "roster_file = \"" + dir_ + "/roster.signed\"\n"
             "[gossip]\nlisten = \"" + a + ":" + std::to_string(kGossipPort) + "\"\n"
             "source_address = \"" + a + "\"\nbackoff_min_ms = 200\nbackoff_max_ms = 2000\n"
             "[probe]\ntls_every = 1\nconnect_timeout_ms = 3500\ntls_timeout_ms = 3000\n"
             "source_address = \"" + a + "\"\n"
             "[self_check]\nservice = \"process:vpn-e2e-" + ids_[i] + "\"\n"
             "[api]\nlisten = \"" + a + ":" + std::to_string(kApiPort) + "\"\n"
             "insecure_plaintext = true\n"
             "token_file = \"" + dir_ + "/api-tokens\"\n");
}

std::string Fleet::spawn_log(std::uint32_t i, const char* what) const {
  return dir_ + "/" + ids_[i] + "/" + what + ".log";
}

void Fleet::start_all() {
  for (std::uint32_t i : members()) {
    start_listener(i);
    start_service(i);
  }
  for (std::uint32_t i : members()) start_daemon(i);
}

void Fleet::start_node(std::uint32_t i) {
  start_listener(i);
  start_service(i);
  start_daemon(i);
}

void Fleet::stop_node(std::uint32_t i) {
  stop_daemon(i);
  services_[i].reset();
  listeners_[i].reset();
}

void Fleet::start_listener(std::uint32_t i) {
  const std::string log = spawn_log(i, "standin");
  listeners_[i] = std::make_unique<SpawnedProcess>(
      net_.in_host(i, {kStandinProgram, "listen", "--address", address(i) + ":" + std::to_string(kListenerPort),
                       "--block-file", dir_ + "/" + ids_[i] + "/blocks"}),
      log, log);
  if (!wait_for_port(address(i), kListenerPort, std::chrono::seconds(10))) {
    throw std::runtime_error("the listener of " + ids_[i] + " did not start; see " + log);
  }
}

void Fleet::start_service(std::uint32_t i) {
  const std::string log = spawn_log(i, "service");
  services_[i] = std::make_unique<SpawnedProcess>(
      net_.in_host(i, {kStandinProgram, "service", "--name", "vpn-e2e-" + ids_[i]}), log, log);
}
void Fleet::stop_service(std::uint32_t i) { services_[i].reset(); }

void Fleet::start_daemon(std::uint32_t i) {
  const std::string log = log_path(i);
  daemons_[i] = std::make_unique<SpawnedProcess>(
      net_.in_host(i, {kMeshnodeProgram, "--config", dir_ + "/" + ids_[i] + "/meshnode.toml"}), log, log);
}

void Fleet::stop_daemon(std::uint32_t i) {
  if (!daemons_[i]) return;
  daemons_[i]->signal(SIGTERM);
  if (!daemons_[i]->wait_exit(std::chrono::seconds(10))) {
    throw std::runtime_error(ids_[i] + " did not stop within 10 s of SIGTERM");
  }
  daemons_[i].reset();
}

void Fleet::kill_daemon(std::uint32_t i) { daemons_[i].reset(); }

bool Fleet::daemon_running(std::uint32_t i) const {
  return i < daemons_.size() && daemons_[i] && daemons_[i]->running();
}

std::optional<Json> Fleet::get(std::uint32_t i, const std::string& path) const {
  const HttpResult result =
      http_request(address(i), kApiPort, boost::beast::http::verb::get, path, read_token_);
  if (result.status != 200) return std::nullopt;
  auto json = Json::parse(result.body, nullptr, false);
  if (json.is_discarded()) return std::nullopt;
  return json;
}

std::optional<ServerMap> Fleet::servers(std::uint32_t i) const {
  auto list = get(i, "/v1/servers");
  if (!list || !list->is_array()) return std::nullopt;
  ServerMap out;
  for (auto& server : *list) out[server.at("id").get<std::string>()] = server;
  return out;
}

unsigned Fleet::put(std::uint32_t i, const std::string& path, const Bytes& body) const {
  return http_request(address(i), kApiPort, boost::beast::http::verb::put, path, admin_token_,
                      std::string(body.begin(), body.end()))
      .status;
}

std::optional<std::uint64_t> Fleet::drops(std::uint32_t i, const std::string& reason) const {
  const HttpResult result =
      http_request(address(i), kApiPort, boost::beast::http::verb::get, "/metrics", read_token_);
  if (result.status != 200) return std::nullopt;
  const std::string sample = "meshnode_gossip_drops_total{reason=\"" + reason + "\"} ";
  const auto at = result.body.find(sample);
  if (at == std::string::npos) return std::nullopt;
  return std::stoull(result.body.substr(at + sample.size()));
}

bool Fleet::api_up(std::uint32_t i, std::chrono::milliseconds limit) const {
  return wait_until([&] { return get(i, "/v1/mesh").has_value(); }, limit);
}

}  // namespace mesh::test::e2e
