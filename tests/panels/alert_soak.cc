// The alerts' measurement (docs/PERFORMANCE.md, "Panel sync and alerts"),
// not part of ctest: 9 real daemons, the Remnawave stand-in and the alert
// receiver for MESHNODE_SOAK_MINUTES (default 30): a VPN service stopped
// and started again on a random server every cycle, a flapping service now
// and then, and the alert sender killed (and restarted) once, half way.
// A watcher node never touched polls every server's status; at the end each
// server's transitions as the watcher saw them are compared with the
// webhook messages the receiver got: missing, duplicated, and the flapping
// ones. Prints one line per server and a summary; exits 1 on a missing
// message or more duplicates than owner changes.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <random>

#include "tests/panels/panel_fleet.h"

namespace mesh::test {
namespace {

using std::chrono::seconds;

// Length of the longest common subsequence of two transition lists.
std::size_t common(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  std::vector<std::vector<std::size_t>> t(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      t[i][j] = a[i - 1] == b[j - 1] ? t[i - 1][j - 1] + 1 : std::max(t[i - 1][j], t[i][j - 1]);
    }
  }
  return t[a.size()][b.size()];
}

// The transitions a sender keeps quiet (docs/PANELS.md, "Alerts": the 4th
// change within 120 s sends "flapping" instead, the next ones nothing until
// 30 s in one state), replayed on the watcher's times of them.
std::size_t damped_transitions(const std::vector<Clock::time_point>& at) {
  std::vector<Clock::time_point> window;
  bool damped = false;
  Clock::time_point last{};
  std::size_t quiet = 0;
  for (const auto& t : at) {
    if (damped && t - last >= seconds(30)) {
      damped = false;
      window.clear();
    }
    window.push_back(t);
    std::erase_if(window, [&](const Clock::time_point& w) { return t - w > seconds(120); });
    last = t;
    if (damped || window.size() >= 4) {
      damped = true;
      ++quiet;
    }
  }
  return quiet;
}

}  // namespace

TEST_CASE("alert soak: one message per transition") {
  require_stub_packages();
  const char* env = std::getenv("MESHNODE_SOAK_MINUTES");
  const int minutes = env ? std::atoi(env) : 30;
  DaemonFleet fleet(9, 74, panel_test_parameters(9));
  INFO("logs in " << fleet.dir());
  PanelFleet stubs(fleet, 74, "flap_changes = 4\nflap_window_ms = 120000\nsettle_ms = 30000\n");
  fleet.start_all();
  const std::uint32_t watcher = 8;
  REQUIRE(DaemonFleet::wait([&] { return api_get(fleet, watcher, "/v1/servers?status=ok").size() == fleet.size(); },
                            seconds(60)));
  std::map<std::string, std::vector<std::string>> observed;  // server -> statuses the watcher saw, in turn
  std::map<std::string, std::vector<Clock::time_point>> observed_at;
  std::map<std::string, std::string> last;
  auto poll = [&] {
    const Json servers = api_get(fleet, watcher, "/v1/servers");
    if (!servers.is_array()) return;
    for (const Json& s : servers) {
      // The state an alert names (node/rotation/alert_tracker.h,
      // alert_state): a server held out of rotation after flapping is
      // "held_out" while its status is ok or no_data. Compared with the
      // bare status, every hold-down read as missing and extra messages.
      const std::string id = s["id"];
      std::string status = s["status"];
      const bool held_out = std::find(s["flags"].begin(), s["flags"].end(), Json("held_out")) != s["flags"].end();
      if (held_out && (status == "ok" || status == "no_data")) status = "held_out";
      if (last.count(id) && last[id] != status) {
        observed[id].push_back(status);
        observed_at[id].push_back(Clock::now());
      }
      last[id] = status;
    }
  };
  auto idle = [&](seconds span) {
    const auto until = Clock::now() + span;
    while (Clock::now() < until) {
      poll();
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
  };
  std::mt19937 random(20261205);
  const auto end = Clock::now() + std::chrono::minutes(minutes);
  int cycle = 0, owner_changes = 0;
  bool killed = false;
  std::uint32_t killed_index = 0;
  while (Clock::now() < end) {
    ++cycle;
    if (!killed && Clock::now() > end - std::chrono::minutes(minutes) / 2) {
      if (auto owner = sole_owner(fleet); owner && *owner != watcher) {
        killed_index = *owner;
        fleet.kill_daemon(killed_index);
        killed = true;
        ++owner_changes;
        std::cout << "cycle " << cycle << ": killed the sender " << fleet.id(killed_index) << std::endl;
      }
    }
    if (cycle % 6 == 0) {  // a flapping service: stopped and started every 5 s for 40 s
      const std::uint32_t f = random() % 8;
      for (int k = 0; k < 8 && f != killed_index; ++k) {
        (k % 2 == 0) ? fleet.stop_service(f) : fleet.start_service(f);
        idle(seconds(5));
      }
      fleet.start_service(f);
      idle(seconds(45));  // settles
      continue;
    }
    const std::uint32_t s = random() % 8;
    if (killed && s == killed_index) continue;
    fleet.stop_service(s);
    idle(seconds(20));
    fleet.start_service(s);
    idle(seconds(20));
  }
  if (killed) {
    fleet.start_daemon(killed_index);
    ++owner_changes;  // it may take the sync back
  }
  idle(seconds(30));
  std::map<std::string, std::vector<std::string>> sent;
  int flapping = 0, settled = 0;
  const Json receiver_state = stubs.receiver->state();  // kept: the loop reads into it
  for (const Json& r : receiver_state["received"]) {
    if (r["channel"] != "webhook") continue;
    const Json& alert = r["alert"];
    if (alert["event"] == "flapping") ++flapping;
    if (alert["event"] == "settled") ++settled;
    if (alert["event"] == "transition") sent[alert["server"]].push_back(alert["to"]);
  }
  std::size_t transitions = 0, delivered = 0, extra = 0, quiet = 0;
  for (const auto& [server, seen] : observed) {
    const auto& got = sent[server];
    const std::size_t both = common(seen, got);
    const std::size_t damped = damped_transitions(observed_at[server]);
    transitions += seen.size();
    delivered += both;
    extra += got.size() - both;
    quiet += damped;
    std::cout << server << ": " << seen.size() << " transitions seen (" << damped << " while flapping, by the watcher's clock), "
              << got.size() << " messages, " << both << " matched" << std::endl;
  }
  std::cout << "soak " << minutes << " min, " << cycle << " cycles: " << transitions << " transitions, " << delivered
            << " delivered once or more, " << transitions - delivered << " without a message (damped while flapping), "
            << extra << " extra messages, " << flapping << " flapping, " << settled << " settled, " << owner_changes
            << " owner changes; violations " << receiver_state["violations"].size() << std::endl;
  CHECK(receiver_state["violations"].empty());
  CHECK(delivered + quiet >= transitions);
  CHECK(extra <= static_cast<std::size_t>(owner_changes));
}

}  // namespace mesh::test
