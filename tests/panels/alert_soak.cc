// The alerts' measurement (docs/PERFORMANCE.md, "Panel sync and alerts"),
// not part of ctest: 9 real daemons, the Remnawave stand-in and the alert
// receiver for MESHNODE_SOAK_MINUTES (default 30): a VPN service stopped
// and started again on a random server every cycle, a flapping service now
// and then, and the alert sender killed (and restarted) once, half way.
//
// What is counted, per server, from the webhook messages as received:
// - the chain: each transition message starts where the one before it
//   ended (`from` = the previous `to`; after `settled`, its state). A
//   message that repeats the one before it is a duplicate; any other break
//   is a transition the sender saw and did not deliver. This is the
//   senders' own view, so a node's short `no_data` under load (which the
//   sender reports, and the watcher below may never see) is neither.
// - the stops the test made: every service stopped for 20 s (outside the
//   flapping cycles) has its `unavailable` message, with the evaluation's
//   time inside the stop (plus 15 s), unless that server is damped then.
// A watcher node (never touched, unless it is the sender killed) also
// polls every server's status; its
// transitions are printed beside the messages for the reader, not judged
// (docs/PERFORMANCE.md: under load it differs from the sender's view).
// Exits 1 on a break in a chain, a stop without its message, or more
// duplicates than owner changes.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <random>
#include <vector>

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
  std::uint32_t watcher = 8;  // moves when the sender killed is the watcher
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
  struct Stop {
    std::string server;
    std::int64_t from_ms, to_ms;  // Unix ms
  };
  std::vector<Stop> stops;
  auto unix_ms = [] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  };
  int cycle = 0, owner_changes = 0;
  bool killed = false;
  std::uint32_t killed_index = 0;
  while (Clock::now() < end) {
    ++cycle;
    if (!killed && Clock::now() > end - std::chrono::minutes(minutes) / 2) {
      if (auto owner = sole_owner(fleet); owner) {
        killed_index = *owner;
        if (killed_index == watcher) watcher = 0;  // its view is printed, not judged
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
    const std::int64_t stopped_ms = unix_ms();
    fleet.stop_service(s);
    idle(seconds(20));
    fleet.start_service(s);
    stops.push_back({fleet.id(s), stopped_ms, unix_ms()});
    idle(seconds(20));
  }
  if (killed) {
    fleet.start_daemon(killed_index);
    ++owner_changes;  // it may take the sync back
  }
  idle(seconds(30));
  const Json receiver_state = stubs.receiver->state();  // kept: the loops read into it
  std::ofstream(fleet.dir() + "/received.json") << receiver_state["received"].dump(1);  // for MESHNODE_KEEP_TEST_DIRS
  struct Message {
    std::string event, from, to;
    std::int64_t at_ms;
    std::string node;  // the sender
  };
  std::map<std::string, std::vector<Message>> sent;  // server -> its webhook messages, as received
  int flapping = 0, settled = 0;
  for (const Json& r : receiver_state["received"]) {
    if (r["channel"] != "webhook") continue;
    const Json& alert = r["alert"];
    const std::string event = alert["event"];
    flapping += event == "flapping";
    settled += event == "settled";
    sent[alert["server"]].push_back({event, alert.value("from", ""), alert.value("to", ""), alert.value("at_ms", std::int64_t{0}),
                                        r.value("node", "")});
  }
  // Owner changes as the messages show them: the sender moved. Besides
  // the one the test makes, a node's own short no_data under load moves
  // the sender (docs/PANELS.md, "One writer for the fleet").
  int sender_changes = 0;
  std::string last_sender;
  for (const Json& r : receiver_state["received"]) {
    if (r["channel"] != "webhook") continue;
    const std::string node = r.value("node", "");
    if (!last_sender.empty() && node != last_sender) ++sender_changes;
    last_sender = node;
  }
  // The chains.
  std::size_t duplicates = 0, breaks = 0, messages = 0;
  for (const auto& [server, list] : sent) {
    std::string state;  // "" before the first message, and while damped
    const Message* previous = nullptr;
    for (const Message& m : list) {
      ++messages;
      if (m.event == "flapping") {
        state.clear();
      } else if (m.event == "settled") {
        state = m.to;
      } else if (!state.empty() && m.from != state) {
        const bool repeat = previous != nullptr && previous->event == "transition" && previous->from == m.from && previous->to == m.to;
        repeat ? ++duplicates : ++breaks;
        std::cout << server << ": " << (repeat ? "duplicate " : "break ") << m.from << " -> " << m.to << " at " << m.at_ms
                  << " from " << m.node << " (the one before from " << previous->node << ")" << std::endl;
        state = m.to;
      } else {
        state = m.to;
      }
      previous = &m;
    }
  }
  // The stops the test made.
  std::size_t stops_found = 0, stops_damped = 0, stops_missed = 0;
  for (const Stop& stop : stops) {
    bool found = false, damped = false;
    for (const Message& m : sent[stop.server]) {
      if (m.at_ms < stop.from_ms || m.at_ms > stop.to_ms + 15'000) continue;
      if (m.event == "transition" && m.to == "unavailable") found = true;
      if (m.event != "transition") damped = true;
    }
    // Damped through the stop: the last message before it opened a quiet spell.
    for (const Message& m : sent[stop.server]) {
      if (m.at_ms >= stop.from_ms) break;
      damped = damped || m.event == "flapping";
      if (m.event == "settled") damped = false;
    }
    found ? ++stops_found : damped ? ++stops_damped : ++stops_missed;
    if (!found && !damped) std::cout << stop.server << ": stopped at " << stop.from_ms << ", no message" << std::endl;
  }
  // The watcher's view, for the reader.
  std::size_t transitions = 0, matched = 0;
  for (const auto& [server, seen] : observed) {
    std::vector<std::string> got;
    for (const Message& m : sent[server]) {
      if (m.event == "transition") got.push_back(m.to);
    }
    const std::size_t both = common(seen, got);
    transitions += seen.size();
    matched += both;
    std::cout << server << ": the watcher saw " << seen.size() << " transitions (" << damped_transitions(observed_at[server])
              << " while flapping, by its clock), " << sent[server].size() << " messages, " << both << " in common" << std::endl;
  }
  std::cout << "soak " << minutes << " min, " << cycle << " cycles, " << owner_changes << " owner changes made, "
            << sender_changes << " seen in the messages: " << messages
            << " messages (" << flapping << " flapping, " << settled << " settled), " << breaks << " breaks, " << duplicates
            << " duplicates; stops " << stops.size() << ": " << stops_found << " with their message, " << stops_damped
            << " damped, " << stops_missed << " without; the watcher saw " << transitions << " transitions, " << matched
            << " in common with the messages; violations " << receiver_state["violations"].size() << std::endl;
  CHECK(receiver_state["violations"].empty());
  CHECK(breaks == 0);
  CHECK(stops_missed == 0);
  CHECK(duplicates <= static_cast<std::size_t>(std::max(owner_changes, sender_changes)));
}

}  // namespace mesh::test
