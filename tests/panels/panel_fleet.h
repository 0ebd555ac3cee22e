// Helpers of the panel tests with real daemons (tests/panels/): reading the
// daemons' API, the stubs' state, and setting a fleet up with a Remnawave
// stand-in and an alert receiver.
#pragma once

#include <chrono>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "tests/node/daemon_fleet.h"
#include "tests/node/http_client.h"
#include "tests/e2e/volume_cap.h"
#include "tests/panels/stub_process.h"

namespace mesh::test {

using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;
using Verb = boost::beast::http::verb;

// fast_parameters() with a daily volume cap that fits a whole day of their
// 2 s probes (under the default cap probes are paced by the hour of the UTC
// day, tests/e2e/volume_cap.h, and a test's timings must not depend on when
// it runs), and with reports stale after 12 s instead of 6. These tests
// count the alerts of every transition, and 6 s is three heartbeats: on a
// loaded 2-core machine (the CI's tests two at a time, or a build beside
// them) a report arrived more than 6 s after the one before, the owner saw
// a server's status go to no_data and back for a second, and told it,
// rightly, as two transitions more (CI of 2026-12-06; reproduced beside a
// build); a node's clock is also suspect, and its alerts silent, once
// reports arrive more than stale_after / 2 old (node/agent/clock_watch.cc).
// No wait here rests on stale_after: the owner's and the sender's report
// age is twice the heartbeat (node/rotation/sync_owner.h).
inline Parameters panel_test_parameters(std::uint32_t servers) {
  Parameters params = fast_parameters();
  params.stale_after_ms = 12'000;
  params.volume_bytes_per_day_max = e2e::suite_volume_cap(params, servers);
  return params;
}

inline Json api_get(const DaemonFleet& fleet, std::uint32_t i, const std::string& target) {
  const auto answer = http_request(fleet.address(i), fleet.api_port(), Verb::get, target, fleet.read_token());
  return answer.status == 200 ? Json::parse(answer.body, nullptr, false) : Json(nullptr);
}

inline std::string status_at(const DaemonFleet& fleet, std::uint32_t i, const std::string& server) {
  const Json s = api_get(fleet, i, "/v1/servers/" + server);
  return s.is_object() ? s.value("status", "") : "";
}

// Each running node's view of the sync: node index -> right.
inline std::map<std::uint32_t, std::string> rights(const DaemonFleet& fleet) {
  std::map<std::uint32_t, std::string> out;
  for (std::uint32_t i = 0; i < fleet.size(); ++i) {
    if (!fleet.daemon_running(i)) continue;
    const Json mesh = api_get(fleet, i, "/v1/mesh");
    if (mesh.is_object() && mesh["panel_sync"].is_object()) out[i] = mesh["panel_sync"]["right"];
  }
  return out;
}

inline std::optional<std::uint32_t> sole_owner(const DaemonFleet& fleet) {
  std::optional<std::uint32_t> owner;
  for (const auto& [i, right] : rights(fleet)) {
    if (right != "owner") continue;
    if (owner) return std::nullopt;
    owner = i;
  }
  return owner;
}

// The stub's host of node i: enabled or not; its id.
// The owner every running node names, when exactly that node says it
// writes; nullopt while their views differ (a start, a takeover).
inline std::optional<std::uint32_t> agreed_owner(const DaemonFleet& fleet) {
  std::optional<std::string> named;
  std::optional<std::uint32_t> writer;
  for (std::uint32_t i = 0; i < fleet.size(); ++i) {
    if (!fleet.daemon_running(i)) continue;
    const Json mesh = api_get(fleet, i, "/v1/mesh");
    if (!mesh.is_object() || !mesh["panel_sync"].is_object() || !mesh["panel_sync"]["owner"].is_string()) {
      return std::nullopt;
    }
    // A node still warming may yet take the role (node/agent/warm_up.h).
    if (mesh.value("warming", true)) return std::nullopt;
    const std::string owner = mesh["panel_sync"]["owner"];
    if (named && *named != owner) return std::nullopt;
    named = owner;
    if (mesh["panel_sync"]["right"] == "owner") {
      if (writer) return std::nullopt;
      writer = i;
    }
  }
  if (!writer || fleet.id(*writer) != *named) return std::nullopt;
  return writer;
}

// The owner every node agrees on (agreed_owner) at polls `hold` apart with
// no other owner agreed on between them; nullopt if none within `limit`.
// One agreeing look is not enough: each node names the owner from the
// reports it holds, and a member's first warm report, or a report late
// under load, moves it a heartbeat later (node/rotation/sync_owner.h: tiers
// and freshness), so all nine could agree on one node for a moment while
// another then took the role and wrote. Polls where the nodes disagree or
// one does not answer do not reset the hold: under load views differ for a
// moment while the owner stays.
inline std::optional<std::uint32_t> stable_owner(const DaemonFleet& fleet, std::chrono::milliseconds hold,
                                                 std::chrono::milliseconds limit) {
  const auto deadline = Clock::now() + limit;
  std::optional<std::uint32_t> held;
  Clock::time_point since = Clock::now();
  while (Clock::now() < deadline) {
    const auto named = agreed_owner(fleet);
    if (named && named != held) {
      held = named;
      since = Clock::now();
    } else if (named && Clock::now() - since >= hold) {
      return held;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return std::nullopt;
}

inline const Json* host_of(const Json& state, const std::string& address) {
  if (!state.is_object()) return nullptr;
  for (const Json& h : state["hosts"]) {
    if (h["address"] == address) return &h;
  }
  return nullptr;
}

inline bool host_enabled(const PanelStub& stub, const std::string& address) {
  const Json state = stub.state();
  const Json* h = host_of(state, address);
  return h != nullptr && (*h)["enabled"].get<bool>();
}

// Alerts the receiver got for `server` to `state`, by channel.
inline int received(const PanelStub& receiver, const std::string& channel, const std::string& server, const std::string& to) {
  const Json state = receiver.state();
  int count = 0;
  if (!state.is_object()) return 0;
  for (const Json& r : state["received"]) {
    if (r["channel"] != channel) continue;
    if (channel == "webhook" && r["alert"]["server"] == server && r["alert"]["to"] == to) ++count;
    if (channel == "telegram" && r["text"].get<std::string>().find(" " + server + " (") != std::string::npos &&
        r["text"].get<std::string>().find("\u2192 " + to + ",") != std::string::npos) {
      ++count;
    }
  }
  return count;
}

// Seconds from the verdict at `node` (status of `server` becomes `status`)
// to the host's state in the panel; nullopt past `limit`.
inline std::optional<double> seconds_to_panel(const DaemonFleet& fleet, std::uint32_t node, const std::string& server,
                                       const std::string& status, const PanelStub& stub,
                                       const std::string& address, bool enabled, std::chrono::seconds limit) {
  std::optional<Clock::time_point> verdict, panel;
  const auto deadline = Clock::now() + limit;
  while (Clock::now() < deadline && !(verdict && panel)) {
    if (!verdict && status_at(fleet, node, server) == status) verdict = Clock::now();
    if (!panel && host_enabled(stub, address) == enabled) panel = Clock::now();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  if (!verdict || !panel) return std::nullopt;
  return std::chrono::duration<double>(*panel - *verdict).count();
}

inline void append(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::app) << text; }


// A Remnawave stand-in and an alert receiver at 127.0.<subnet>.250 and .251,
// every node's config pointing at both (rounds every 10 s, 2 s deadlines).
struct PanelFleet {
  PanelFleet(DaemonFleet& fleet, std::uint32_t subnet, const std::string& extra_alerts = "");
  std::unique_ptr<PanelStub> panel, receiver;
};

inline PanelFleet::PanelFleet(DaemonFleet& fleet, std::uint32_t subnet, const std::string& extra_alerts) {
  Json hosts = Json::array();
  for (std::uint32_t i = 0; i < fleet.size(); ++i) {
    hosts.push_back({{"remark", "host " + fleet.id(i)}, {"address", fleet.address(i)},
                     {"port", fleet.roster().servers[i].probe.port}});
  }
  hosts.push_back({{"remark", "not ours"}, {"address", "192.0.2.1"}, {"port", 443}});
  panel = std::make_unique<PanelStub>("remnawave", "127.0." + std::to_string(subnet) + ".250", hosts, fleet.dir());
  receiver = std::make_unique<PanelStub>("receiver", "127.0." + std::to_string(subnet) + ".251", Json::array(), fleet.dir());
  std::ofstream(fleet.dir() + "/panel-credentials") << "# the Remnawave API token\ntoken panel-token\n";
  std::ofstream(fleet.dir() + "/hook-secret") << "hook-secret\n";
  std::ofstream(fleet.dir() + "/telegram-token") << "123456:telegram-token\n";
  for (std::uint32_t i = 0; i < fleet.size(); ++i) {
    append(fleet.config_path(i),
           "[panel]\nkind = \"remnawave\"\nurl = \"" + panel->url() + "\"\ncredentials_file = \"" + fleet.dir() +
               "/panel-credentials\"\ninterval_ms = 10000\ntimeout_ms = 2000\nchanges_per_minute = 100\n"
               "[alerts]\nwebhook_url = \"" + receiver->url() + "/hook\"\nwebhook_secret_file = \"" + fleet.dir() +
               "/hook-secret\"\ntelegram_api = \"" + receiver->url() + "\"\ntelegram_token_file = \"" + fleet.dir() +
               "/telegram-token\"\ntelegram_chat_id = \"-1001\"\nstatus_page_url = \"https://status.example.net/\"\n"
               "timeout_ms = 2000\n" + extra_alerts);
  }
}

}  // namespace mesh::test
