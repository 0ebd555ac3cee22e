// meshnode and its roster as real processes (node/daemon_roster.cc): a
// first start without a valid roster, or with another key for this node,
// exits 2 naming both keys and writes nothing; a running node whose new
// roster file is refused keeps its roster and says so in its log, in
// /healthz (503 with the reason) and in /metrics, until the file is fixed;
// the API answers what the node knows from its very first request.
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "record/envelope.h"
#include "tests/node/daemon_fleet.h"
#include "tests/node/http_client.h"
#include "tests/node/net_util.h"

namespace mesh::test {
namespace {

using std::chrono::seconds;
using Json = nlohmann::json;
using Verb = boost::beast::http::verb;

const std::string kMeshnode = MESHNODE_BINARY_DIR "/node/meshnode";

bool contains(const std::string& text, const std::string& fragment) { return text.find(fragment) != std::string::npos; }

std::size_t count(const std::string& text, const std::string& fragment) {
  std::size_t n = 0;
  for (auto at = text.find(fragment); at != std::string::npos; at = text.find(fragment, at + 1)) ++n;
  return n;
}

bool empty_dir(const std::string& dir) {
  return std::filesystem::is_directory(dir) && std::filesystem::is_empty(dir);
}

ProcessResult start(const DaemonFleet& fleet, std::uint32_t i) {
  return run_process({kMeshnode, "--config", fleet.config_path(i)});
}

HttpResult get(const DaemonFleet& fleet, const std::string& target) {
  return http_request(fleet.address(0), fleet.api_port(), Verb::get, target, fleet.read_token());
}

Bytes signed_roster(const Roster& roster, const SecretKey& signer) {
  return encode_signed_record(RecordKind::roster, kOperatorOrigin, roster.version, 1'700'000'000'000,
                              encode_roster_payload(roster), signer);
}

TEST_CASE("a first start without a valid roster exits 2, says which and why, and writes nothing") {
  DaemonFleet fleet(2, 71);
  const std::string operator_hex = public_key_to_hex(fleet.operator_key().public_key);
  SUBCASE("no roster file") {
    std::filesystem::remove(fleet.roster_path());
    auto result = start(fleet, 0);
    CHECK(result.exit_code == 2);
    CHECK(contains(result.err, "no roster to start from: roster file '" + fleet.roster_path() + "' does not exist"));
    CHECK(contains(result.err, "the data dir holds none"));
  }
  SUBCASE("a file that is not a signed roster: damaged") {
    const std::string text = "not a record";
    fleet.write_roster_bytes(Bytes(text.begin(), text.end()));
    auto result = start(fleet, 0);
    CHECK(result.exit_code == 2);
    CHECK(contains(result.err, "refused: not a signed record"));
    CHECK(contains(result.err, "altered after signing"));
  }
  SUBCASE("signed with another operator key: that, with operator_key named") {
    fleet.write_roster(fleet.roster(), generate_key_pair().secret_key);
    auto result = start(fleet, 0);
    CHECK(result.exit_code == 2);
    CHECK(contains(result.err, "is not signed by operator_key " + operator_hex));
    CHECK(contains(result.err, "most likely signed with another operator key"));
  }
  SUBCASE("signed with a node's key: both keys named") {
    fleet.write_roster(fleet.roster(), fleet.node_key(1).secret_key);
    auto result = start(fleet, 0);
    CHECK(result.exit_code == 2);
    CHECK(contains(result.err, "operator_key " + operator_hex));
    CHECK(contains(result.err, "signed with server n2's key " + public_key_to_hex(fleet.node_key(1).public_key)));
  }
  CHECK(empty_dir(fleet.data_dir(0)));
}

TEST_CASE("a start whose key is not this node's in the roster exits 2 naming both keys, and writes nothing") {
  DaemonFleet fleet(2, 72);
  Roster roster = fleet.roster();
  const KeyPair stranger = generate_key_pair();
  roster.servers[0].key = stranger.public_key;
  fleet.write_roster(roster);
  auto result = start(fleet, 0);
  CHECK(result.exit_code == 2);
  CHECK(contains(result.err, "lists server 'n1' with key " + public_key_to_hex(stranger.public_key)));
  CHECK(contains(result.err, "this node's key file holds " + public_key_to_hex(fleet.node_key(0).public_key)));
  CHECK(empty_dir(fleet.data_dir(0)));
  // Not in the roster at all.
  roster.servers.erase(roster.servers.begin());
  fleet.write_roster(roster);
  auto absent = start(fleet, 0);
  CHECK(absent.exit_code == 2);
  CHECK(contains(absent.err, "has no server 'n1'"));
  CHECK(empty_dir(fleet.data_dir(0)));
}

TEST_CASE("start-up errors are printed once") {
  DaemonFleet fleet(1, 73);
  std::filesystem::remove(fleet.roster_path());
  auto result = start(fleet, 0);
  CHECK(result.exit_code == 2);
  CHECK(count(result.err, "no roster to start from") == 1);
}

// A running node never loses a working roster to a bad file: it keeps the
// one it holds, logs the refusal (and every minute after: the unit test of
// node/standing_problems.h), answers /healthz 503 with the reason and sets
// its gauge, across a restart too, until a good file is read.
TEST_CASE("a running node whose new roster file is refused keeps its roster and says so until it is fixed") {
  DaemonFleet fleet(1, 74);
  fleet.start_all();
  INFO("logs in " << fleet.dir());
  REQUIRE(DaemonFleet::wait([&] { return get(fleet, "/healthz").status == 200; }, seconds(20)));
  CHECK(contains(get(fleet, "/metrics").body, "meshnode_healthy 1\n"));
  Roster next = fleet.roster();
  next.version = 2;
  Bytes tampered = signed_roster(next, fleet.operator_key().secret_key);
  tampered.back() = 0xff;  // the signature's scalar half over the group order
  fleet.write_roster_bytes(tampered);
  fleet.signal_daemon(0, SIGHUP);
  auto refused = [&] {
    const auto health = get(fleet, "/healthz");
    return health.status == 503 && contains(health.body, "roster_file_refused");
  };
  REQUIRE(DaemonFleet::wait(refused, seconds(10)));
  const Json health = Json::parse(get(fleet, "/healthz").body);
  CHECK(health["status"] == "unhealthy");
  REQUIRE(health["problems"].size() == 1);
  CHECK(health["problems"][0]["problem"] == "roster_file_refused");
  const std::string message = health["problems"][0]["message"];
  CHECK(contains(message, "refused (damaged)"));
  CHECK(contains(message, "keeping roster version 1"));
  const std::string metrics = get(fleet, "/metrics").body;
  CHECK(contains(metrics, "meshnode_problem{problem=\"roster_file_refused\"} 1\n"));
  CHECK(contains(metrics, "meshnode_healthy 0\n"));
  CHECK(contains(metrics, "meshnode_roster_version 1\n"));
  CHECK(Json::parse(get(fleet, "/v1/mesh").body)["roster_version"] == 1);
  CHECK(get(fleet, "/v1/routes").status == 200);
  CHECK(contains(fleet.log_text(0), "error problem: roster file '" + fleet.roster_path() + "' refused (damaged)"));
  CHECK(fleet.daemon_running(0));

  // A restart with the bad file still there starts from the stored roster,
  // and says so at once.
  REQUIRE(fleet.stop_daemon(0, seconds(5)).has_value());
  fleet.start_daemon(0);
  REQUIRE(DaemonFleet::wait([&] { return get(fleet, "/healthz").status != 0; }, seconds(20)));
  CHECK(refused());

  // Fixed: a good, newer file read on SIGHUP.
  fleet.write_roster(next);
  fleet.signal_daemon(0, SIGHUP);
  CHECK(DaemonFleet::wait([&] { return get(fleet, "/healthz").status == 200; }, seconds(10)));
  CHECK(Json::parse(get(fleet, "/v1/mesh").body)["roster_version"] == 2);
  CHECK(contains(get(fleet, "/metrics").body, "meshnode_problem{problem=\"roster_file_refused\"} 0\n"));
  CHECK(contains(fleet.log_text(0), "roster_file_refused: fixed"));
}

// No 503 {"error":"no_roster"} for a second after every start: the roster
// is offered and the verdicts evaluated before the API serves, and the
// answers say the node has just started (docs/API.md, "Just started").
TEST_CASE("the API's first answer after a start holds the roster, and says the node has just started") {
  Parameters params = fast_parameters();
  params.heartbeat_interval_ms = 60'000;  // "starting" lasts a heartbeat when no peer syncs: all of this test
  params.stale_after_ms = 180'000;
  DaemonFleet fleet(1, 75, params);
  fleet.start_all();
  INFO("logs in " << fleet.dir());
  HttpResult first;
  REQUIRE(DaemonFleet::wait([&] {
    first = get(fleet, "/v1/routes");
    return first.status != 0;
  }, seconds(20)));
  CHECK(first.status == 200);
  CHECK(first.starting == "true");
  const Json routes = Json::parse(first.body);
  REQUIRE(routes.size() == 2);
  CHECK(routes[0]["servers"] == Json::array({"n1"}));
  const Json mesh = Json::parse(get(fleet, "/v1/mesh").body);
  CHECK(mesh["starting"] == true);
  CHECK(mesh["started_ms"].get<std::int64_t>() > 1'700'000'000'000);
  CHECK(get(fleet, "/v1/servers").status == 200);
  // And a start's log holds no line per server without data.
  CHECK(!contains(fleet.log_text(0), "unknown -> no_data"));
}

TEST_CASE("JSON logs: one object a line, numbers as numbers, the config's level names") {
  DaemonFleet fleet(1, 76);
  const std::string log = fleet.dir() + "/json.log";
  {
    SpawnedProcess node({kMeshnode, "--config", fleet.config_path(0), "--log-format", "json"}, log, log);
    REQUIRE(node.wait_for_err("\"event\":\"verdicts\"", seconds(20)));
    node.signal(SIGTERM);
    REQUIRE(node.wait_exit(seconds(5)).has_value());
  }
  std::ifstream in(log);
  bool saw_start = false;
  for (std::string line; std::getline(in, line);) {
    CAPTURE(line);
    const Json event = Json::parse(line, nullptr, false);
    REQUIRE(!event.is_discarded());
    const std::string level = event.at("level");
    CHECK((level == "trace" || level == "debug" || level == "info" || level == "warn" || level == "error"));
    if (event.at("event") == "start") {
      saw_start = true;
      CHECK(event.at("boot").is_number_unsigned());
      CHECK(event.at("records").is_number());
    }
  }
  CHECK(saw_start);
}

}  // namespace
}  // namespace mesh::test
