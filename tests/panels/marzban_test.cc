// The panel sync with Marzban (docs/PANELS.md), 3 real daemons against a
// stand-in whose requests are checked by what marzban-sdk itself sends
// (stub.mjs): the login with username and password, GET /api/hosts, a PUT
// that flips is_disabled on the host of a server out of rotation and
// changes nothing else, the heal; and a dry run that changes nothing.
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <set>

#include "tests/node/daemon_fleet.h"
#include "tests/node/http_client.h"
#include "tests/panels/panel_fleet.h"

namespace mesh::test {
namespace {

using std::chrono::seconds;

bool enabled(const PanelStub& stub, const std::string& address) {
  const Json state = stub.state();
  if (!state.is_object()) return false;
  for (const Json& h : state["hosts"]) {
    if (h["address"] == address) return h["enabled"].get<bool>();
  }
  return false;
}

std::string panel_section(const PanelStub& stub, const std::string& dir, bool dry_run) {
  return "[panel]\nkind = \"marzban\"\nurl = \"" + stub.url() + "\"\ncredentials_file = \"" + dir +
         "/marzban-credentials\"\ninterval_ms = 10000\ntimeout_ms = 2000\n" + (dry_run ? "dry_run = true\n" : "");
}

}  // namespace

TEST_CASE("Marzban: logged in, the host disabled by a PUT that changes nothing else, enabled at the heal") {
  require_stub_packages();
  DaemonFleet fleet(3, 72, panel_test_parameters(3));
  INFO("logs in " << fleet.dir());
  Json hosts = Json::array();
  for (std::uint32_t i = 0; i < fleet.size(); ++i) {
    hosts.push_back({{"remark", "🇩🇪 " + fleet.id(i)}, {"address", fleet.address(i)},
                     {"port", fleet.roster().servers[i].probe.port}, {"tag", i == 2 ? "VMESS WS" : "VLESS TCP REALITY"}});
  }
  PanelStub panel("marzban", "127.0.72.250", hosts, fleet.dir());
  std::ofstream(fleet.dir() + "/marzban-credentials") << "username admin\npassword secret\n";
  for (std::uint32_t i = 0; i < fleet.size(); ++i) {
    std::ofstream(fleet.config_path(i), std::ios::app) << panel_section(panel, fleet.dir(), false);
  }
  fleet.start_all();
  REQUIRE(DaemonFleet::wait([&] { return fleet.all_show(fleet.everyone(), "n3", "ok"); }, seconds(60)));
  fleet.stop_service(2);
  CHECK(DaemonFleet::wait([&] { return !enabled(panel, fleet.address(2)); }, seconds(40)));
  CHECK(enabled(panel, fleet.address(0)));
  fleet.start_service(2);
  CHECK(DaemonFleet::wait([&] { return enabled(panel, fleet.address(2)); }, seconds(40)));
  Json state = panel.state();
  CHECK_MESSAGE(state["violations"].empty(), state["violations"].dump());
  CHECK(state["writes"].size() == 2);
  std::set<std::string> writers;
  for (const Json& w : state["writes"]) writers.insert(w["node"]);
  CHECK(writers.size() == 1);

  // Hosts off the contract: the round fails with the reason, nothing is written.
  panel.set_mode("garbage");
  fleet.stop_service(1);
  std::string reason;
  CHECK(DaemonFleet::wait([&] {
    for (std::uint32_t i = 0; i < fleet.size(); ++i) {
      const auto mesh = http_request(fleet.address(i), fleet.api_port(), boost::beast::http::verb::get, "/v1/mesh",
                                     fleet.read_token());
      const Json json = Json::parse(mesh.body, nullptr, false);
      if (!json.is_discarded() && json["panel_sync"]["failures_in_row"].get<int>() > 0) {
        reason = json["panel_sync"]["last_error"];
        return true;
      }
    }
    return false;
  }, seconds(40)));
  CHECK(reason.find("is not a ProxyHost") != std::string::npos);
  state = panel.state();
  CHECK(state["writes"].size() == 2);
  CHECK(enabled(panel, fleet.address(1)));
  // /metrics with the panel's families is Prometheus text promtool accepts.
  if (std::system("command -v promtool > /dev/null 2>&1") == 0) {
    const auto metrics = http_request(fleet.address(0), fleet.api_port(), boost::beast::http::verb::get, "/metrics",
                                      fleet.read_token());
    CHECK(metrics.body.find("meshnode_panel_failures_total") != std::string::npos);
    const std::string path = fleet.dir() + "/metrics.txt";
    std::ofstream(path) << metrics.body;
    CHECK(std::system(("promtool check metrics < " + path + " > " + path + ".out 2>&1").c_str()) == 0);
  }
  panel.set_mode("ok");
  CHECK(DaemonFleet::wait([&] { return !enabled(panel, fleet.address(1)); }, seconds(70)));
}

TEST_CASE("Marzban, dry run: the round is logged, nothing is written") {
  require_stub_packages();
  DaemonFleet fleet(2, 73, panel_test_parameters(2));
  INFO("logs in " << fleet.dir());
  Json hosts = Json::array();
  for (std::uint32_t i = 0; i < fleet.size(); ++i) {
    hosts.push_back({{"remark", fleet.id(i)}, {"address", fleet.address(i)}, {"port", fleet.roster().servers[i].probe.port}});
  }
  PanelStub panel("marzban", "127.0.73.250", hosts, fleet.dir());
  std::ofstream(fleet.dir() + "/marzban-credentials") << "username admin\npassword secret\n";
  for (std::uint32_t i = 0; i < fleet.size(); ++i) {
    std::ofstream(fleet.config_path(i), std::ios::app) << panel_section(panel, fleet.dir(), true);
  }
  fleet.start_all();
  REQUIRE(DaemonFleet::wait([&] { return fleet.all_show(fleet.everyone(), "n2", "ok"); }, seconds(60)));
  fleet.stop_service(1);
  CHECK(DaemonFleet::wait([&] {
    return fleet.log_text(0).find("dry run: would disable host 'n2'") != std::string::npos ||
           fleet.log_text(1).find("dry run: would disable host 'n2'") != std::string::npos;
  }, seconds(40)));
  const Json state = panel.state();
  CHECK(state["writes"].empty());
  CHECK_MESSAGE(state["violations"].empty(), state["violations"].dump());
  CHECK(state["requests"].get<int>() > 0);
}

}  // namespace mesh::test
