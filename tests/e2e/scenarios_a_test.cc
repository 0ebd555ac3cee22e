// Scenarios 1-6 of the end-to-end suite (docs in tests/e2e/README.md): the
// steady state, blocks by a country (IP and SNI-style), a stopped service,
// a stopped agent, a whole route bad. Each starts from a healed fleet and
// leaves it healed. Everything is read from the nodes' HTTP API.
#include <doctest/doctest.h>

#include "tests/e2e/scenario_util.h"

namespace mesh::test::e2e {
namespace {

constexpr auto kVerdictLimit = seconds(90);

// Blocks `country`'s view of `target` through `rules` on the target's host,
// checks the verdict everywhere, lifts the block, checks the heal.
void country_block(Scenario& s, Fleet& f, std::uint32_t target, const std::string& country,
                   const TestNetwork::Rules& rules, const std::string& reason) {
  const ServerId x = f.id(target);
  const auto blockers = of_country(f, country);
  f.net().set_rules(target, rules);
  Watch watch(f, f.running());
  watch.allow(x, {"unreachable"});
  const bool shown = watch.until(
      [&](std::uint32_t, const ServerMap& servers) {
        auto it = servers.find(x);
        if (it == servers.end() || it->second.at("status") != "unreachable") return false;
        const Json& w = it->second.at("witnesses");
        if (w.at("failing") != blockers.size()) return false;
        for (const auto& [c, tally] : w.at("by_country").items()) {
          const bool blocking = c == country;
          if (tally.at("failing") != (blocking ? tally.at("eligible").get<std::size_t>() : 0)) return false;
        }
        return w.at("by_country").contains(country);
      },
      kVerdictLimit);
  s.expect(shown, x + " unreachable at every node, " + std::to_string(blockers.size()) + " failing, all of " +
                      country + " and none elsewhere");
  // The reason, as the observers of the blocking country saw it, at three nodes.
  for (std::uint32_t node : {0u, 1u, 2u}) {
    auto detail = f.get(node, "/v1/servers/" + x);
    std::size_t with_reason = 0;
    if (detail) {
      for (const auto& o : detail->at("observers")) {
        if (o.at("country") == country && o.at("last_reason") == reason) ++with_reason;
      }
    }
    s.expect(with_reason == blockers.size(), "at " + f.id(node) + " every " + country + " observer of " + x +
                                                 " gives reason " + reason);
  }
  bool out_of_rotation = true;
  for (std::uint32_t node : f.running()) out_of_rotation = out_of_rotation && !in_route(route_at(f, node, "all"), x);
  s.expect(out_of_rotation, x + " out of route `all` at every node");
  s.take(watch);
  if (shown) s.seen(x + " unreachable everywhere, " + country + " " + std::to_string(blockers.size()) + "/" +
                    std::to_string(blockers.size()) + ", reason " + reason);

  f.net().clear_rules(target);
  Watch heal(f, f.running());
  heal.allow(x, {"unreachable"});
  const bool back = heal.until([&](std::uint32_t, const ServerMap& servers) { return status_of(servers, x) == "ok"; },
                               kVerdictLimit);
  heal.hold(seconds(10));  // and nothing else moves after the heal
  s.expect(back, x + " ok again at every node after the block is lifted");
  if (back) s.seen("healed everywhere in " + fixed1(*heal.slowest_s()));
  s.expect(heal.false_verdicts() == 0, "no transient verdict on another server after the heal (" +
                                           heal.false_text() + ")");
}

TEST_CASE("1. steady state") {
  Fleet& f = fleet();
  Scenario s("1 steady state", "every server ok at every node, records converge, every route full");
  Watch start(f, f.running());
  start.allow_everywhere({"no_data"});  // before the first reports land
  const bool ok = start.until([&](std::uint32_t, const ServerMap& m) { return every_member_ok(f, m); },
                              seconds(120));
  s.expect(ok, "every server ok at every node");
  s.take(start);  // nothing but no_data before the first reports
  Watch steady(f, f.running());
  steady.hold(seconds(10));
  s.expect(steady.false_verdicts() == 0, "nothing moves in steady state (" + steady.false_text() + ")");
  const auto converged = converge(f, f.running(), seconds(60));
  s.expect(converged.has_value(), "every node holds the same records once the flight lands");
  if (converged) s.seen("all ok; records converged in " + fixed1(*converged));
  for (std::uint32_t node : f.running()) {
    const Json all = route_at(f, node, "all");
    const Json first = route_at(f, node, "first");
    s.expect(!all.is_null() && all.at("servers").size() == 9 && all.at("degraded") == false,
             "route all full at " + f.id(node));
    s.expect(!first.is_null() && first.at("servers") == Json{"n1", "n2", "n3"} && first.at("degraded") == false,
             "route first = n1 n2 n3 at " + f.id(node));
  }
}

TEST_CASE("2. a country blocks one server (IP)") {
  Fleet& f = fleet();
  Scenario s("2 country block (IP)", "n5 unreachable everywhere, DE 3 of 3, tcp_timeout; heals, no transient");
  REQUIRE(settle(f, seconds(90)));
  const auto de = of_country(f, "DE");
  country_block(s, f, 4, "DE",
                {{"ip saddr " + address_set(de) + " drop"}, {"ip daddr " + address_set(de) + " drop"}},
                "tcp_timeout");
}

TEST_CASE("3. a country resets one server's TLS after the ClientHello (SNI-style)") {
  Fleet& f = fleet();
  Scenario s("3 SNI-style block", "n6 unreachable everywhere, DE 3 of 3, tls_reset; heals");
  REQUIRE(settle(f, seconds(90)));
  const auto de = of_country(f, "DE");
  // A TLS handshake record (content type 22) from DE to port 443 is answered
  // with a reset: TCP connects, the ClientHello dies.
  country_block(s, f, 5, "DE",
                {{"ip saddr " + address_set(de) + " tcp dport 443 @ih,0,8 0x16 reject with tcp reset"}, {}},
                "tls_reset");
}

TEST_CASE("4. the VPN service stops") {
  Fleet& f = fleet();
  Scenario s("4 service down", "n7 unavailable everywhere, out of rotation; ok again when started");
  REQUIRE(settle(f, seconds(90)));
  const std::uint32_t target = 6;
  const ServerId x = f.id(target);
  f.stop_service(target);
  Watch watch(f, f.running());
  watch.allow(x, {"unavailable"});
  const bool shown = watch.until([&](std::uint32_t, const ServerMap& m) { return status_of(m, x) == "unavailable"; },
                                 kVerdictLimit);
  s.expect(shown, x + " unavailable at every node");
  bool out = true;
  for (std::uint32_t node : f.running()) out = out && !in_route(route_at(f, node, "all"), x);
  s.expect(out, x + " out of route `all` at every node");
  s.take(watch);
  f.start_service(target);
  Watch heal(f, f.running());
  heal.allow(x, {"unavailable"});
  const bool back = heal.until([&](std::uint32_t, const ServerMap& m) { return status_of(m, x) == "ok"; }, kVerdictLimit);
  s.expect(back, x + " ok again everywhere once the service runs");
  s.expect(heal.false_verdicts() == 0, "nothing else moves (" + heal.false_text() + ")");
  if (shown && back) s.seen(x + " unavailable everywhere, back in " + fixed1(*heal.slowest_s()));
}

TEST_CASE("5. the agent stops while the listener keeps running") {
  Fleet& f = fleet();
  Scenario s("5 agent stopped", "n8 no_data at every other node, still in rotation; ok when restarted");
  REQUIRE(settle(f, seconds(90)));
  const std::uint32_t target = 7;
  const ServerId x = f.id(target);
  f.stop_daemon(target);
  Watch watch(f, f.running());
  watch.allow(x, {"no_data"});
  const bool shown = watch.until([&](std::uint32_t, const ServerMap& m) { return status_of(m, x) == "no_data"; },
                                 kVerdictLimit);
  s.expect(shown, x + " no_data at every other node");
  bool kept = true;
  for (std::uint32_t node : f.running()) kept = kept && in_route(route_at(f, node, "all"), x);
  s.expect(kept, x + " stays in route `all` (silence alone removes nothing)");
  s.take(watch);
  f.start_daemon(target);
  Watch heal(f, f.running());
  heal.allow(x, {"no_data"});
  heal.allow_at(target, {"no_data"});  // its stored reports are old until fresh ones arrive
  const bool back = heal.until([&](std::uint32_t, const ServerMap& m) { return status_of(m, x) == "ok"; }, kVerdictLimit);
  s.expect(back, x + " ok again at every node, itself included");
  s.expect(heal.false_verdicts() == 0, "nothing else moves (" + heal.false_text() + ")");
  if (shown && back) s.seen(x + " no_data elsewhere and in rotation; back in " + fixed1(*heal.slowest_s()));
}

TEST_CASE("6. a whole route goes bad") {
  Fleet& f = fleet();
  Scenario s("6 whole route bad", "route first degraded, serving its best server n3 at every node");
  REQUIRE(settle(f, seconds(90)));
  // Route first is n1, n2, n3: two services stop (unavailable: they serve
  // no one) and DE blocks n3 (unreachable, but it serves everyone else):
  // n3 is the best available, by the ranking of docs/VERDICTS.md, "Routes".
  f.stop_service(0);
  f.stop_service(1);
  const auto de = of_country(f, "DE");
  f.net().set_rules(2, {{"ip saddr " + address_set(de) + " drop"}, {"ip daddr " + address_set(de) + " drop"}});
  Watch watch(f, f.running());
  watch.allow("n1", {"unavailable"});
  watch.allow("n2", {"unavailable"});
  watch.allow("n3", {"unreachable"});
  const bool shown = watch.until(
      [&](std::uint32_t node, const ServerMap& m) {
        if (status_of(m, "n1") != "unavailable" || status_of(m, "n2") != "unavailable" ||
            status_of(m, "n3") != "unreachable") {
          return false;
        }
        const Json first = route_at(f, node, "first");
        return !first.is_null() && first.at("degraded") == true && first.at("servers") == Json{"n3"};
      },
      kVerdictLimit);
  s.expect(shown, "n1 n2 unavailable, n3 unreachable, route first degraded serving n3 at every node");
  s.take(watch);
  if (shown) s.seen("degraded, serving n3 at every node");
  f.start_service(0);
  f.start_service(1);
  f.net().clear_rules(2);
  Watch heal(f, f.running());
  heal.allow("n1", {"unavailable"});
  heal.allow("n2", {"unavailable"});
  heal.allow("n3", {"unreachable"});
  const bool back = heal.until(
      [&](std::uint32_t node, const ServerMap& m) {
        const Json first = route_at(f, node, "first");
        return every_member_ok(f, m) && !first.is_null() && first.at("degraded") == false;
      },
      kVerdictLimit);
  s.expect(back, "route first full again everywhere");
  s.take(heal, false);
}

}  // namespace
}  // namespace mesh::test::e2e
