// The panel sync and the alerts with 9 real daemons (docs/PANELS.md): a
// Remnawave stand-in built from @remnawave/backend-contract and an alert
// receiver (stub.mjs). A stopped VPN service disables its host and the
// heal enables it, with one writer for the fleet; a host re-enabled by hand
// is disabled again; a panel that is down stalls nothing and is caught up
// with; a route never loses its last enabled host; a server blocked from
// one country leaves that country's rotation only (GET /v1/routes?country=);
// the owner killed hands over with no election; one alert per transition. Every request the
// daemons send is checked by the contract (0 violations).
#include <doctest/doctest.h>

#include <algorithm>
#include <set>

#include "tests/panels/panel_fleet.h"

namespace mesh::test {
namespace {

using std::chrono::seconds;

}  // namespace

TEST_CASE("Remnawave: one writer for 9 daemons, within 10 s of the verdict, harmless when the panel is not") {
  require_stub_packages();
  DaemonFleet fleet(9, 71, panel_test_parameters(9));
  INFO("logs in " << fleet.dir());
  PanelFleet stubs(fleet, 71);
  PanelStub& panel = *stubs.panel;
  PanelStub& receiver = *stubs.receiver;
  fleet.start_all();
  REQUIRE(DaemonFleet::wait([&] {
    for (std::uint32_t i = 0; i < fleet.size(); ++i) {
      const Json ok = api_get(fleet, i, "/v1/servers?status=ok");
      if (!ok.is_array() || ok.size() != fleet.size()) return false;
    }
    return true;
  }, seconds(60)));
  // Three heartbeats of agreement (stable_owner says why one look is not enough).
  constexpr seconds kOwnerHeld{6};
  std::optional<std::uint32_t> owner = stable_owner(fleet, kOwnerHeld, seconds(40));
  REQUIRE(owner.has_value());
  // Every node names it; each settles on its right once its own view is
  // sound (a node that has just started may read itself partitioned for a
  // moment, and writes nothing then).
  auto settled = [&] {
    const auto agreed = rights(fleet);
    if (agreed.size() != fleet.size()) return false;
    for (const auto& [i, right] : agreed) {
      if (right != (i == *owner ? "owner" : "not_owner")) return false;
    }
    return true;
  };
  CHECK(DaemonFleet::wait(settled, seconds(20)));
  // Every node names it, again once settled. One writer is what this test
  // holds the fleet to.
  CHECK(DaemonFleet::wait([&] { return agreed_owner(fleet) == owner; }, seconds(20)));
  // A node that is neither the owner nor in route "first" (n1..n3).
  std::uint32_t k = 3;
  while (k == *owner) ++k;
  const std::string k_address = fleet.address(k);

  SUBCASE("block, heal, by hand, panel down, a whole route, the owner killed") {
    // Out of rotation: the host is disabled within 10 s of the verdict, by the owner.
    fleet.stop_service(k);
    auto took = seconds_to_panel(fleet, *owner, fleet.id(k), "unavailable", panel, k_address, false, seconds(40));
    REQUIRE(took.has_value());
    MESSAGE("disabled " << *took << " s after the verdict");
    CHECK(*took <= 10.0);
    Json state = panel.state();
    REQUIRE(!state["writes"].empty());
    CHECK(state["writes"].back()["node"] == fleet.id(*owner));
    CHECK_MESSAGE(DaemonFleet::wait([&] { return received(receiver, "webhook", fleet.id(k), "unavailable") == 1 &&
                                                 received(receiver, "telegram", fleet.id(k), "unavailable") == 1; },
                                    seconds(15)),
                  receiver.state()["received"].dump());
    // Healed: enabled within 10 s.
    fleet.start_service(k);
    took = seconds_to_panel(fleet, *owner, fleet.id(k), "ok", panel, k_address, true, seconds(40));
    REQUIRE(took.has_value());
    MESSAGE("enabled " << *took << " s after the heal");
    CHECK(*took <= 10.0);
    CHECK_MESSAGE(DaemonFleet::wait([&] { return received(receiver, "webhook", fleet.id(k), "ok") == 1; }, seconds(15)),
                  receiver.state()["received"].dump());

    // Re-enabled by hand while still out: disabled again at the next round, and logged.
    fleet.stop_service(k);
    REQUIRE(DaemonFleet::wait([&] { return !host_enabled(panel, k_address); }, seconds(40)));
    panel.set_host((*host_of(panel.state(), k_address))["id"], true);
    CHECK(DaemonFleet::wait([&] { return !host_enabled(panel, k_address); }, seconds(20)));
    CHECK(fleet.log_text(*owner).find("re-enabled by hand while its server is out of rotation") != std::string::npos);

    // The panel down: the node goes on, counts it, and catches up once it answers.
    panel.set_mode("down");
    fleet.start_service(k);
    REQUIRE(DaemonFleet::wait([&] { return status_at(fleet, *owner, fleet.id(k)) == "ok"; }, seconds(30)));
    std::this_thread::sleep_for(seconds(15));
    const Json mesh = api_get(fleet, *owner, "/v1/mesh");
    REQUIRE(mesh.is_object());  // the API answers while the panel does not
    CHECK(mesh["panel_sync"]["failures_in_row"].get<int>() > 0);
    CHECK(!mesh["panel_sync"]["last_error"].get<std::string>().empty());
    const auto metrics = http_request(fleet.address(*owner), fleet.api_port(), Verb::get, "/metrics", fleet.read_token());
    CHECK(metrics.body.find("meshnode_panel_failures_total ") != std::string::npos);
    CHECK(metrics.body.find("meshnode_panel_sync_owner 1") != std::string::npos);
    CHECK_FALSE(host_enabled(panel, k_address));
    panel.set_mode("ok");
    CHECK(DaemonFleet::wait([&] { return host_enabled(panel, k_address); }, seconds(45)));

    // Route "first" (n1..n3): two out, the third serves it; all three out,
    // the route serves its best available, and never has no enabled host.
    bool route_ever_empty = false;
    auto watch_route = [&] {
      const Json s = panel.state();
      bool any = false;
      for (std::uint32_t i = 0; i < 3; ++i) {
        const Json* h = host_of(s, fleet.address(i));
        any = any || (h != nullptr && (*h)["enabled"].get<bool>());
      }
      route_ever_empty = route_ever_empty || (s.is_object() && !any);
    };
    fleet.stop_service(0);
    fleet.stop_service(1);
    CHECK(DaemonFleet::wait([&] { watch_route(); return !host_enabled(panel, fleet.address(0)) &&
                                                       !host_enabled(panel, fleet.address(1)); }, seconds(40)));
    CHECK(host_enabled(panel, fleet.address(2)));
    fleet.stop_service(2);
    CHECK(DaemonFleet::wait([&] {
      watch_route();
      const Json r = api_get(fleet, 3, "/v1/routes/first");
      return r.is_object() && r["degraded"] == true;
    }, seconds(30)));
    for (int i = 0; i < 30; ++i) {  // 6 s of rounds on a degraded route
      watch_route();
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    CHECK_FALSE(route_ever_empty);
    for (std::uint32_t i = 0; i < 3; ++i) fleet.start_service(i);
    CHECK(DaemonFleet::wait([&] { return host_enabled(panel, fleet.address(0)) && host_enabled(panel, fleet.address(1)); },
                            seconds(40)));

    // Blocked from one country only: out for its users, in for the others'
    // (GET /v1/routes?country=), out of the global answer, and so disabled.
    const std::uint32_t b = 3;  // n4, DE
    std::string fi;
    for (std::uint32_t i = 0; i < fleet.size(); ++i) {
      if (fleet.roster().servers[i].country == "FI") fi += "drop " + fleet.address(i) + "\n";
    }
    fleet.write_block_file(b, fi);
    auto members = [&](const std::string& query) {
      const Json routes = api_get(fleet, 0, "/v1/routes" + query);
      return routes.is_array() ? routes[0]["servers"] : Json();
    };
    const Json n4 = fleet.id(b);
    REQUIRE(DaemonFleet::wait([&] { return status_at(fleet, 0, fleet.id(b)) == "unreachable"; }, seconds(40)));
    CHECK(DaemonFleet::wait([&] {
      const Json global = members(""), for_fi = members("?country=FI"), for_nl = members("?country=NL");
      auto has = [&](const Json& list) { return std::find(list.begin(), list.end(), n4) != list.end(); };
      return !has(global) && !has(for_fi) && has(for_nl) && has(members("?country=DE"));
    }, seconds(20)));
    CHECK(members("?country=FI").size() == fleet.size() - 1);
    CHECK(DaemonFleet::wait([&] { return !host_enabled(panel, fleet.address(b)); }, seconds(20)));
    fleet.write_block_file(b, "");
    CHECK(DaemonFleet::wait([&] { return host_enabled(panel, fleet.address(b)); }, seconds(40)));

    // The owner killed while a change is due: the next one takes over, no election.
    owner = stable_owner(fleet, kOwnerHeld, seconds(40));
    REQUIRE(owner.has_value());
    std::uint32_t j = 4;
    while (j == *owner || j == k) ++j;
    const std::string killed = fleet.id(*owner);
    fleet.kill_daemon(*owner);
    fleet.stop_service(j);
    CHECK(DaemonFleet::wait([&] { return !host_enabled(panel, fleet.address(j)); }, seconds(30)));
    state = panel.state();
    CHECK(state["writes"].back()["node"] != killed);
    std::optional<std::uint32_t> next;
    REQUIRE((next = stable_owner(fleet, kOwnerHeld, seconds(40))).has_value());
    CHECK(state["writes"].back()["node"] == fleet.id(*next));
    CHECK(DaemonFleet::wait([&] { return received(receiver, "webhook", fleet.id(j), "unavailable") >= 1; }, seconds(20)));
    CHECK(received(receiver, "webhook", fleet.id(j), "unavailable") <= 2);  // at most one duplicate per owner change
  }

  const Json final_state = panel.state();
  std::string writers;  // runs of one writer, in order: a new run only at an owner change
  for (const Json& write : final_state["writes"]) {
    const std::string node = write["node"];
    if (writers.empty() || !writers.ends_with(" " + node)) writers += " " + node;
  }
  MESSAGE("writes " << final_state["writes"].size() << ", by runs of:" << writers);
  CHECK_MESSAGE(final_state["violations"].empty(), final_state["violations"].dump());
  CHECK_MESSAGE(receiver.state()["violations"].empty(), receiver.state()["violations"].dump());
  const Json* stranger = host_of(final_state, "192.0.2.1");
  REQUIRE(stranger != nullptr);
  CHECK((*stranger)["enabled"] == true);  // never touched
  for (const Json& write : final_state["writes"]) {
    for (const char* action : {"enable", "disable"}) {
      for (const Json& id : write[action]) CHECK(id != (*stranger)["id"]);
    }
  }
}

}  // namespace mesh::test
