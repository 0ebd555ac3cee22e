#include "node/verdict_log.h"

#include <algorithm>
#include <map>
#include <set>

namespace mesh::node {
namespace {

std::string join(const std::vector<ServerId>& ids) {
  std::string out;
  for (const ServerId& id : ids) out += (out.empty() ? "" : ", ") + id;
  return out.empty() ? "(none)" : out;
}

std::string split_by_country(const verdict::ServerVerdict& server) {
  std::string out;
  for (const auto& row : server.by_country) {
    if (row.failing == 0) continue;
    out += (out.empty() ? "" : ", ") + row.country + " " + std::to_string(row.failing) + "/" +
           std::to_string(row.eligible);
  }
  return out;
}

LogLine server_line(const verdict::ServerVerdict* was, const verdict::ServerVerdict& now) {
  const std::string from = was != nullptr ? verdict::to_string(was->status) : "unknown";
  const std::string to = verdict::to_string(now.status);
  LogLine line;
  line.level = now.status == verdict::ServerStatus::ok ? LogLevel::info : LogLevel::warn;
  line.event = "verdict";
  line.message = now.id + ": " + from + " -> " + to;
  if (!now.caption.empty()) line.message += ": " + now.caption;
  const std::string split = split_by_country(now);
  if (now.status == verdict::ServerStatus::unreachable && !split.empty()) {
    line.message += "; failing witnesses by country: " + split;
  }
  if (!now.self_check_reason.empty()) line.message += " (" + now.self_check_reason + ")";
  line.fields = {{"server", now.id}, {"from", from}, {"to", to}, {"caption", now.caption},
                 {"failing", now.failing}, {"eligible", now.eligible}, {"by_country", split}};
  return line;
}

LogLine route_line(const verdict::RouteMembership* was, const verdict::RouteMembership& now) {
  LogLine line;
  line.level = now.degraded ? LogLevel::warn : LogLevel::info;
  line.event = "route";
  line.message = "route " + now.route_id + ": in rotation " + join(now.members);
  if (was != nullptr) line.message += " (was " + join(was->members) + ")";
  if (now.degraded) line.message += "; degraded: " + now.degraded_reason;
  if (was != nullptr && was->degraded && !now.degraded) line.message += "; no longer degraded";
  line.fields = {{"route", now.route_id}, {"members", join(now.members)},
                 {"degraded", now.degraded}};
  return line;
}

// The first snapshot since start: a server without data is not news (the
// node has just started and has heard from nobody yet; the summary line
// counts them), anything else that is not ok is.
bool news_at_start(const verdict::ServerVerdict& server) {
  return server.status != verdict::ServerStatus::ok && server.status != verdict::ServerStatus::no_data;
}

// A server this node has not heard from since it started: its first report
// (no_data -> ok) is no news, only debug; any other move is, and either way
// it is heard from now.
void heard_from(LogLine& line, const verdict::ServerVerdict& was, const verdict::ServerVerdict& now,
                std::set<ServerId>* unheard) {
  if (unheard == nullptr || unheard->erase(now.id) == 0) return;
  if (was.status == verdict::ServerStatus::no_data && now.status == verdict::ServerStatus::ok) {
    line.level = LogLevel::debug;
  }
}

}  // namespace

std::vector<LogLine> silent_since_start(const verdict::Evaluation& now, std::set<ServerId>& unheard) {
  std::vector<LogLine> lines;
  for (const auto& server : now.servers) {
    if (unheard.count(server.id) == 0 || server.status != verdict::ServerStatus::no_data) continue;
    LogLine line = server_line(nullptr, server);
    line.message = server.id + ": no_data: not heard from since this node started: " + server.caption;
    line.fields.push_back({"since_start", true});
    lines.push_back(std::move(line));
  }
  unheard.clear();
  return lines;
}

std::vector<LogLine> verdict_transitions(const verdict::Evaluation* before, const verdict::Evaluation& after,
                                         std::set<ServerId>* unheard) {
  std::vector<LogLine> lines;
  const std::size_t unheard_before = unheard != nullptr ? unheard->size() : 0;
  std::map<std::string_view, const verdict::ServerVerdict*> was_server;
  std::map<std::string_view, const verdict::RouteMembership*> was_route;
  if (before != nullptr) {
    for (const auto& server : before->servers) was_server[server.id] = &server;
    for (const auto& route : before->routes) was_route[route.route_id] = &route;
  }
  std::size_t not_ok = 0, no_data = 0;
  for (const auto& server : after.servers) {
    not_ok += server.status != verdict::ServerStatus::ok;
    no_data += server.status == verdict::ServerStatus::no_data;
    if (before == nullptr && unheard != nullptr && server.status == verdict::ServerStatus::no_data) {
      unheard->insert(server.id);
    }
    auto it = was_server.find(server.id);
    const verdict::ServerVerdict* was = it == was_server.end() ? nullptr : it->second;
    if (was == nullptr ? news_at_start(server) : was->status != server.status || was->caption != server.caption) {
      lines.push_back(server_line(was, server));
      if (was != nullptr) heard_from(lines.back(), *was, server, unheard);
    }
  }
  if (unheard != nullptr && before != nullptr && unheard_before > 0 && unheard->empty()) {
    lines.push_back({LogLevel::info, "verdicts",
                     "every server judged since the start: " + std::to_string(after.servers.size()) +
                         " servers, " + std::to_string(after.servers.size() - not_ok) + " ok",
                     {{"roster_version", after.roster_version}, {"servers", after.servers.size()}, {"not_ok", not_ok}}});
  }
  for (const auto& route : after.routes) {
    auto it = was_route.find(route.route_id);
    const verdict::RouteMembership* was = it == was_route.end() ? nullptr : it->second;
    const bool changed = was == nullptr ? route.degraded
                                        : was->members != route.members || was->degraded != route.degraded;
    if (changed) lines.push_back(route_line(was, route));
  }
  const std::vector<ServerId> none;
  const auto& was_unreliable = before != nullptr ? before->unreliable_observers : none;
  for (const ServerId& id : after.unreliable_observers) {
    if (std::find(was_unreliable.begin(), was_unreliable.end(), id) != was_unreliable.end()) continue;
    lines.push_back({LogLevel::warn, "unreliable_observer",
                     id + ": its votes are discarded (it fails to reach too many of its targets)",
                     {{"server", id}, {"unreliable", true}}});
  }
  for (const ServerId& id : was_unreliable) {
    if (std::find(after.unreliable_observers.begin(), after.unreliable_observers.end(), id) !=
        after.unreliable_observers.end()) {
      continue;
    }
    lines.push_back({LogLevel::info, "unreliable_observer", id + ": its votes count again",
                     {{"server", id}, {"unreliable", false}}});
  }
  if (before == nullptr || before->roster_version != after.roster_version) {
    std::string summary = "roster version " + std::to_string(after.roster_version) + ": " +
                          std::to_string(after.servers.size()) + " servers, " +
                          std::to_string(after.servers.size() - not_ok) + " ok";
    if (before == nullptr && no_data > 0) summary += ", " + std::to_string(no_data) + " without data yet";
    lines.push_back({LogLevel::info, "verdicts", summary,
                     {{"roster_version", after.roster_version},
                      {"servers", after.servers.size()},
                      {"not_ok", not_ok},
                      {"no_data", no_data}}});
  }
  return lines;
}

}  // namespace mesh::node
