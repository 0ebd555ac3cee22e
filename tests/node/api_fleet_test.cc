// The panel API of real daemons (docs/API.md): every converged node answers
// the same; a roster put through one node's API reaches every node; bad
// rosters are refused with the reason; /metrics is Prometheus text that
// promtool accepts; snapshots are fresh while the API is read.
#include <doctest/doctest.h>

#include <chrono>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "record/envelope.h"
#include "record/report.h"
#include "tests/node/daemon_fleet.h"
#include "tests/node/http_client.h"
#include "tests/tools/failure_notes.h"
#include "tests/tools/run_process.h"

namespace mesh::test {
namespace {

using std::chrono::seconds;
using Verb = boost::beast::http::verb;
using Json = nlohmann::json;

// A request that got no answer is noted, with why (printed if the test
// case fails: tests/tools/failure_notes.h).
HttpResult noted(HttpResult result, const DaemonFleet& fleet, std::uint32_t i, const std::string& what) {
  if (result.status == 0) {
    keep_for_failure("no answer", what + " to " + fleet.address(i) + ":" + std::to_string(fleet.api_port()) +
                                      ": " + result.error);
  }
  return result;
}

HttpResult get(const DaemonFleet& fleet, std::uint32_t i, const std::string& target) {
  return noted(http_request(fleet.address(i), fleet.api_port(), Verb::get, target, fleet.read_token()), fleet, i,
               "GET " + target);
}

std::string signed_roster(const DaemonFleet& fleet, const Roster& roster) {
  const Bytes raw = encode_signed_record(RecordKind::roster, kOperatorOrigin, roster.version,
                                         1'700'000'000'000, encode_roster_payload(roster),
                                         fleet.operator_key().secret_key);
  return std::string(raw.begin(), raw.end());
}

TEST_CASE("every node's API answers the same routes and servers; a stopped service shows everywhere") {
  DaemonFleet fleet(3, 51);
  fleet.start_all();
  INFO("logs in " << fleet.dir());
  REQUIRE(DaemonFleet::wait([&] {
    for (std::uint32_t i = 0; i < 3; ++i) {
      auto servers = get(fleet, i, "/v1/servers?status=ok");
      if (servers.status != 200 || Json::parse(servers.body).size() != 3) return false;
    }
    return true;
  }, seconds(60)));
  const auto routes = get(fleet, 0, "/v1/routes");
  CHECK(routes.status == 200);
  CHECK(DaemonFleet::wait([&] { return get(fleet, 1, "/v1/routes").body == routes.body &&
                                       get(fleet, 2, "/v1/routes").body == routes.body; }, seconds(20)));
  fleet.stop_service(2);
  CHECK(DaemonFleet::wait([&] {
    for (std::uint32_t i = 0; i < 3; ++i) {
      const auto server = get(fleet, i, "/v1/servers/n3");
      if (server.status != 200 || Json::parse(server.body)["status"] != "unavailable") return false;
    }
    return true;
  }, seconds(40)));
  const Json detail = Json::parse(get(fleet, 0, "/v1/servers/n3").body);
  CHECK(detail["self_check"]["service_ok"] == false);
  CHECK(detail["caption"] == "Server unavailable");
  CHECK(detail["observers"].size() == 2);
  const Json mesh = Json::parse(get(fleet, 0, "/v1/mesh").body);
  CHECK(mesh["node"] == "n1");
  CHECK(mesh["roster_version"] == 1);
  CHECK(mesh["peers"].size() == 2);
  CHECK(get(fleet, 0, "/healthz").status == 200);
  CHECK(http_request(fleet.address(0), fleet.api_port(), Verb::get, "/v1/routes").status == 401);
}

TEST_CASE("a roster PUT on one node's API reaches every node; bad ones are refused with the reason") {
  DaemonFleet fleet(3, 52);
  fleet.start_all();
  INFO("logs in " << fleet.dir());
  // Every node's API, not one: the daemons start side by side, and the puts
  // below go to n2 while the end reads all three.
  REQUIRE(DaemonFleet::wait([&] {
    for (std::uint32_t i = 0; i < 3; ++i) {
      if (get(fleet, i, "/v1/routes").status != 200) return false;
    }
    return true;
  }, seconds(60)));
  Roster next = fleet.roster();
  next.version = 2;
  next.routes.push_back(Route{"spare", "Spare"});
  const std::string raw = signed_roster(fleet, next);
  auto put = [&](const std::string& body, const std::string& token) {
    return noted(http_request(fleet.address(1), fleet.api_port(), Verb::put, "/v1/roster", token, body), fleet, 1,
                 "PUT /v1/roster");
  };
  CHECK(put(raw, fleet.read_token()).status == 403);
  auto garbage = put("not a record", fleet.admin_token());
  CHECK(garbage.status == 400);
  CHECK(Json::parse(garbage.body)["error"] == "invalid_roster");
  Roster forged = next;
  forged.version = 3;
  Bytes forged_raw = encode_signed_record(RecordKind::roster, kOperatorOrigin, 3, 1'700'000'000'000,
                                          encode_roster_payload(forged), generate_key_pair().secret_key);
  auto unsigned_put = put(std::string(forged_raw.begin(), forged_raw.end()), fleet.admin_token());
  CHECK(unsigned_put.status == 400);
  CHECK(unsigned_put.body.find("bad_signature") != std::string::npos);
  auto accepted = put(raw, fleet.admin_token());
  CHECK(accepted.status == 200);
  CHECK(Json::parse(accepted.body)["roster_version"] == 2);
  auto again = put(raw, fleet.admin_token());
  CHECK(again.status == 409);
  CHECK(Json::parse(again.body)["error"] == "not_newer");
  // A validly signed report is a record, not a roster: refused, not spread.
  // Newer than any report of n3's (seq and time are its signing time).
  const auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch()).count();
  Report report;
  report.view.roster_version = 2;
  const Bytes report_raw = encode_signed_record(RecordKind::report, "n3", static_cast<std::uint64_t>(now_ms),
                                                now_ms, encode_report_payload(report, now_ms),
                                                fleet.node_key(2).secret_key);
  auto not_roster = put(std::string(report_raw.begin(), report_raw.end()), fleet.admin_token());
  CHECK(not_roster.status == 400);
  CHECK(Json::parse(not_roster.body)["error"] == "invalid_roster");
  CHECK(Json::parse(not_roster.body)["message"] == "not a roster: a report record of 'n3'");
  // The same version with other bytes: the protocol's tie-break decides
  // (docs/PROTOCOL.md, "Ordering and tie-break"), as gossip would: bytes
  // that sort lower replace the roster held, higher ones are not newer.
  auto variant = [&](const char* name) {
    Roster other = next;
    other.routes.back().name = name;  // "Spare" -> same length, one byte apart
    return signed_roster(fleet, other);
  };
  const std::string lower = variant("Spard"), higher = variant("Sparf");
  REQUIRE(lower < raw);
  REQUIRE(raw < higher);
  CHECK(put(higher, fleet.admin_token()).status == 409);
  auto replaced = put(lower, fleet.admin_token());
  CHECK(replaced.status == 200);
  CHECK(Json::parse(replaced.body)["roster_version"] == 2);
  CHECK(put(raw, fleet.admin_token()).status == 409);  // now the higher of the two
  CHECK(DaemonFleet::wait([&] {
    for (std::uint32_t i = 0; i < 3; ++i) {
      auto mesh = get(fleet, i, "/v1/mesh");
      if (mesh.status != 200 || Json::parse(mesh.body)["roster_version"] != 2) return false;
      auto routes = get(fleet, i, "/v1/routes");
      if (routes.status != 200 || routes.body.find("\"Spard\"") == std::string::npos) return false;
    }
    return true;
  }, seconds(40)));
  // Seconds later, no node holds the report that was put.
  for (std::uint32_t i = 0; i < 3; ++i) {
    for (const Json& held : Json::parse(get(fleet, i, "/v1/mesh/records").body)) CHECK(held["seq"] != now_ms);
  }
}

TEST_CASE("snapshots: at most a tick old while the API is read, at most 5 s after a quiet spell") {
  DaemonFleet fleet(2, 54);
  fleet.start_all();
  INFO("logs in " << fleet.dir());
  REQUIRE(DaemonFleet::wait([&] { return get(fleet, 0, "/v1/mesh").status == 200; }, seconds(60)));
  auto age_ms = [](const HttpResult& result) {
    REQUIRE_FALSE(result.snapshot_ms.empty());
    const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::system_clock::now().time_since_epoch()).count();
    return now - std::stoll(result.snapshot_ms);
  };
  // Read every 400 ms: a new snapshot at every tick (1 s). The bounds leave
  // a second and a half for a loaded (sanitized, parallel) test machine.
  for (int i = 0; i < 8; ++i) {
    const HttpResult mesh = get(fleet, 0, "/v1/mesh");
    CHECK(mesh.status == 200);
    CHECK(age_ms(mesh) <= 2'500);
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
  }
  // Nobody reads for 12 s (past the 10 s readers window): a snapshot every
  // 5 s, so the first answer is at most 5 s and a tick old (and the slack) ...
  std::this_thread::sleep_for(seconds(12));
  CHECK(age_ms(get(fleet, 0, "/v1/mesh")) <= 8'000);
  // ... and that read brings a fresh one at the next tick.
  std::this_thread::sleep_for(std::chrono::milliseconds(1'500));
  CHECK(age_ms(get(fleet, 0, "/v1/mesh")) <= 2'500);
}

TEST_CASE("GET /metrics is Prometheus text that promtool accepts") {
  if (std::system("command -v promtool > /dev/null 2>&1") != 0) {
    MESSAGE("SKIPPED: promtool is not installed (Debian package prometheus; scripts/install-deps.sh installs it)");
    return;
  }
  DaemonFleet fleet(2, 53);
  fleet.start_all();
  INFO("logs in " << fleet.dir());
  // n2 can show ok (its own report) before n1 has probed it: wait for an ok
  // probe in the text too (it comes from the API snapshot).
  REQUIRE(DaemonFleet::wait([&] { return get(fleet, 0, "/v1/servers?status=ok").body.find("n2") != std::string::npos &&
                                         get(fleet, 0, "/metrics").body.find("meshnode_probes_total{result=\"ok\"}") !=
                                             std::string::npos; },
                            seconds(60)));
  const auto metrics = get(fleet, 0, "/metrics");
  REQUIRE(metrics.status == 200);
  CHECK(metrics.body.find("meshnode_build_info{version=") != std::string::npos);
  CHECK(metrics.body.find("meshnode_probes_total{result=\"ok\"}") != std::string::npos);
  const std::string path = fleet.dir() + "/metrics.txt";
  std::ofstream(path) << metrics.body;
  const std::string command = "promtool check metrics < " + path + " > " + path + ".out 2>&1";
  const int status = std::system(command.c_str());
  const std::string said = read_text(path + ".out");
  INFO("promtool said: " << said);
  CHECK(status == 0);
  CHECK(said.empty());  // no lint warning either
}

}  // namespace
}  // namespace mesh::test
