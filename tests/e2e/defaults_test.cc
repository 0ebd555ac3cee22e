// Scenario D of the end-to-end suite (tests/e2e/README.md): an IP block and
// a power-off at the product's default intervals (probes and self-checks as
// shipped: probes every 60 s with a 10 s connect deadline, TLS turns every
// 5 intervals, heartbeats every 5 minutes, stale after 12), on a fleet of
// its own. It takes about 6 minutes of real time, so it is not in the main
// suite (`make test`): skipped there, run by ctest `e2e_defaults` (label
// e2e_defaults) with --no-skip. Issue 37: out of rotation at every node
// within about a minute of the fault.
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "tests/e2e/scenario_util.h"

namespace mesh::test::e2e {
namespace {

constexpr auto kVerdictLimit = seconds(240);  // the detection bound at the defaults: 4m04s
constexpr auto kHealLimit = seconds(240);

// The suite's node config probes with a 3.5 s deadline and TLS at every
// probe (its 2 s intervals); here the [probe] section is the shipped one.
void ship_probe_defaults(const Fleet& f) {
  for (std::uint32_t i = 0; i < f.size(); ++i) {
    const std::string path = f.dir() + "/" + f.id(i) + "/meshnode.toml";
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    std::string config = text.str();
    const std::string suite = "[probe]\ntls_every = 1\nconnect_timeout_ms = 3500\ntls_timeout_ms = 3000\n";
    const auto at = config.find(suite);
    REQUIRE(at != std::string::npos);
    config.replace(at, suite.size(), "[probe]\n");
    std::ofstream(path, std::ios::trunc) << config;
  }
}

bool shows(const ServerMap& servers, const ServerId& x, const char* status) {
  auto it = servers.find(x);
  return it != servers.end() && it->second.at("status") == status;
}

TEST_CASE("D. the product's default intervals: an IP block and a power-off leave rotation within a minute or two" *
          doctest::skip(true)) {
  char pattern[] = "/tmp/meshnode-e2e-defaults-XXXXXX";
  REQUIRE(::mkdtemp(pattern) != nullptr);
  std::cout << "e2e: fleet of 9 at the default intervals in " << pattern << " (logs there)" << std::endl;
  Fleet f(9, Parameters{}, pattern);
  ship_probe_defaults(f);
  f.start_all();
  for (std::uint32_t i : f.members()) REQUIRE(f.api_up(i, seconds(20)));
  // Every target probed a few times, and the heartbeats on their grid.
  REQUIRE(settle(f, seconds(120)));
  std::this_thread::sleep_for(seconds(150));
  REQUIRE(settle(f, seconds(60)));

  {
    Scenario s("D1 IP block, defaults", "n5 unreachable everywhere (DE 3 of 3) and out of `all`; heals");
    const ServerId x = f.id(4);
    const auto de = of_country(f, "DE");
    f.net().set_rules(4, {{"ip saddr " + address_set(de) + " drop"}, {"ip daddr " + address_set(de) + " drop"}});
    Watch watch(f, f.running());
    watch.allow(x, {"unreachable"});
    const bool shown = watch.until(
        [&](std::uint32_t node, const ServerMap& servers) {
          return shows(servers, x, "unreachable") && !in_route(route_at(f, node, "all"), x);
        },
        kVerdictLimit);
    s.expect(shown, x + " unreachable and out of route `all` at every node");
    s.take(watch);
    if (shown) s.seen(x + " out of rotation everywhere after " + fixed1(*watch.slowest_s()));
    f.net().clear_rules(4);
    Watch heal(f, f.running());
    heal.allow(x, {"unreachable"});
    const bool back = heal.until([&](std::uint32_t, const ServerMap& m) { return status_of(m, x) == "ok"; },
                                 kHealLimit);
    s.expect(back, x + " ok again at every node");
    if (back) s.seen("healed in " + fixed1(*heal.slowest_s()));
    s.expect(heal.false_verdicts() == 0, "no other verdict after the heal (" + heal.false_text() + ")");
  }
  REQUIRE(settle(f, seconds(120)));
  {
    Scenario s("D2 power-off, defaults", "n6 unreachable everywhere, out of `all`; back when powered on");
    const ServerId x = f.id(5);
    // A host that is off answers nothing: every packet to and from it is
    // dropped, and its daemon is gone.
    f.net().set_rules(5, {{"drop"}, {"drop"}});
    f.kill_daemon(5);
    Watch watch(f, f.running());
    watch.allow(x, {"unreachable", "no_data"});
    const bool shown = watch.until(
        [&](std::uint32_t node, const ServerMap& servers) {
          return shows(servers, x, "unreachable") && !in_route(route_at(f, node, "all"), x);
        },
        kVerdictLimit);
    s.expect(shown, x + " unreachable and out of route `all` at every other node");
    s.take(watch);
    if (shown) s.seen(x + " out of rotation everywhere after " + fixed1(*watch.slowest_s()));
    f.net().clear_rules(5);
    f.start_daemon(5);
    REQUIRE(f.api_up(5, seconds(20)));
    Watch heal(f, f.running());
    heal.allow(x, {"unreachable", "no_data"});
    heal.allow_at(5, {"no_data"});
    const bool back = heal.until([&](std::uint32_t, const ServerMap& m) { return status_of(m, x) == "ok"; },
                                 kHealLimit);
    s.expect(back, x + " ok again at every node once powered on");
    if (back) s.seen("back in " + fixed1(*heal.slowest_s()));
  }
}

}  // namespace
}  // namespace mesh::test::e2e
