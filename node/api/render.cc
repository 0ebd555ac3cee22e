#include "node/api/render.h"

#include <nlohmann/json.hpp>

#include "node/rotation/country_routes.h"

namespace mesh::api {
namespace {

using Json = nlohmann::json;

Json age_s(const ApiSnapshot& snapshot, std::optional<UnixMs> at_ms) {
  if (!at_ms || *at_ms <= 0) return nullptr;
  return std::max<std::int64_t>(0, (snapshot.taken_ms - *at_ms) / 1000);
}

Json flags_json(const verdict::StatusFlags& flags) {
  Json list = Json::array();
  for (std::string_view name : verdict::flag_names(flags)) list.push_back(name);
  return list;
}

// The stage ladder a reason implies: what the last probe got through.
Json stages_json(ProbeFailure reason) {
  switch (reason) {
    case ProbeFailure::none: return {{"tcp", "ok"}, {"tls", "unknown"}};
    case ProbeFailure::tcp_timeout:
    case ProbeFailure::tcp_refused:
    case ProbeFailure::tcp_reset:
    case ProbeFailure::tcp_unreachable: return {{"tcp", "failed"}, {"tls", "not_reached"}};
    case ProbeFailure::tls_timeout:
    case ProbeFailure::tls_reset:
    case ProbeFailure::tls_alert:
    case ProbeFailure::tls_bad_peer: return {{"tcp", "ok"}, {"tls", "failed"}};
  }
  return {{"tcp", "unknown"}, {"tls", "unknown"}};
}

Json metrics_json(const Metrics& m) {
  return {{"cpu_permille", m.cpu_permille},
          {"memory_used_kib", m.memory_used_kib},
          {"memory_total_kib", m.memory_total_kib},
          {"disk_used_mib", m.disk_used_mib},
          {"disk_total_mib", m.disk_total_mib},
          {"net_rx_bytes_per_s", m.net_rx_bytes_per_s},
          {"net_tx_bytes_per_s", m.net_tx_bytes_per_s},
          {"load_average_milli", m.load_average_milli},
          {"uptime_s", m.uptime_s},
          {"listener_connections", m.listener_connections}};
}

}  // namespace

const ServerState* ApiSnapshot::server(std::string_view id) const {
  for (const ServerState& state : servers) {
    if (state.entry->id == id) return &state;
  }
  return nullptr;
}

Json route_json(const ApiSnapshot& snapshot, std::size_t index) {
  const Route& route = snapshot.roster->routes[index];
  const verdict::RouteMembership& membership = snapshot.evaluation->routes[index];
  return {{"id", route.id},
          {"name", route.name},
          {"servers", membership.members},
          {"degraded", membership.degraded},
          {"reason", membership.degraded_reason}};
}

Json country_routes_json(const ApiSnapshot& snapshot, std::string_view country) {
  Json out = Json::array();
  const auto routes = rotation::country_routes(*snapshot.roster, *snapshot.evaluation, country);
  for (std::size_t i = 0; i < routes.size(); ++i) {
    out.push_back({{"id", snapshot.roster->routes[i].id},
                   {"name", snapshot.roster->routes[i].name},
                   {"country", country},
                   {"servers", routes[i].members},
                   {"degraded", routes[i].degraded},
                   {"reason", routes[i].degraded_reason}});
  }
  return out;
}

Json server_json(const ApiSnapshot& snapshot, const ServerState& server) {
  const verdict::ServerVerdict& verdict = *server.verdict;
  Json by_country = Json::object();
  for (const verdict::CountryTally& row : verdict.by_country) {
    by_country[row.country] = {{"failing", row.failing}, {"eligible", row.eligible}};
  }
  const bool stale = std::find(verdict.badges.begin(), verdict.badges.end(),
                               std::string(verdict::kBadgeStale)) != verdict.badges.end();
  return {{"id", server.entry->id},
          {"country", server.entry->country},
          {"routes", server.entry->routes},
          {"status", verdict::to_string(verdict.status)},
          {"caption", verdict.caption},
          {"flags", flags_json(verdict.flags)},
          {"witnesses", {{"failing", verdict.failing}, {"eligible", verdict.eligible},
                         {"quorum", verdict.quorum}, {"discarded", verdict.discarded},
                         {"explained", verdict.explained}, {"by_country", by_country}}},
          {"last_report_age_s", age_s(snapshot, server.last_report_ms)},
          {"metrics_stale", stale}};
}

Json server_detail_json(const ApiSnapshot& snapshot, const ServerState& server) {
  Json out = server_json(snapshot, server);
  out["metrics"] = server.metrics ? metrics_json(*server.metrics) : Json(nullptr);
  out["self_check"] = server.self_check
                          ? Json{{"listener_ok", server.self_check->listener_ok},
                                 {"service_ok", server.self_check->service_ok},
                                 {"reason", server.self_check->reason}}
                          : Json(nullptr);
  Json observers = Json::array();
  for (const ObserverView& o : server.observers) {
    observers.push_back({{"id", o.id},
                         {"country", o.country},
                         {"streak", {{"failing", o.fail_streak}, {"ok", o.ok_streak}}},
                         {"last_reason", to_string(o.reason)},
                         {"stages", stages_json(o.reason)},
                         {"last_probe_age_s", age_s(snapshot, o.last_probe_ms)},
                         {"unreliable", o.unreliable},
                         {"recovered", o.recovered}});
  }
  out["observers"] = std::move(observers);
  return out;
}

Json panel_sync_json(const ApiSnapshot& snapshot);
Json alerts_json(const ApiSnapshot& snapshot);

Json mesh_json(const ApiSnapshot& snapshot) {
  Json peers = Json::array();
  for (const PeerState& peer : snapshot.peers) {
    peers.push_back({{"id", peer.id},
                     {"connected", peer.connected},
                     {"last_frame_age_s", age_s(snapshot, peer.last_frame_ms)}});
  }
  return {{"node", snapshot.node},
          {"started_ms", snapshot.started_ms},
          {"starting", snapshot.starting},
          {"roster_version", snapshot.roster ? Json(snapshot.roster->version) : Json(nullptr)},
          {"digest", snapshot.digest_hex},
          {"records", snapshot.records},
          {"partitioned", snapshot.evaluation != nullptr && snapshot.evaluation->partitioned},
          {"clock", {{"suspect", snapshot.clock_suspect}, {"offset_ms", snapshot.clock_offset_ms}}},
          {"warming", snapshot.warming},
          {"peers", std::move(peers)},
          {"volume", {{"used_today", snapshot.volume_used_bytes},
                      {"cap", snapshot.volume_cap_bytes},
                      {"tight", snapshot.volume_tight}}},
          {"panel_sync", panel_sync_json(snapshot)},
          {"alerts", alerts_json(snapshot)}};
}

Json panel_sync_json(const ApiSnapshot& snapshot) {
  if (!snapshot.panel_sync) return nullptr;
  const SyncStatus& p = *snapshot.panel_sync;
  return {{"kind", p.kind},
          {"dry_run", p.dry_run},
          {"right", p.right},
          {"owner", p.owner.empty() ? Json(nullptr) : Json(p.owner)},
          {"last_sync_age_s", age_s(snapshot, p.last_sync_ms)},
          {"last_error", p.last_error},
          {"failures_in_row", p.failures_in_row},
          {"hosts", {{"total", p.hosts}, {"disabled", p.hosts_disabled}, {"unknown", p.hosts_unknown}}},
          {"changes", {{"enabled", p.enabled_total}, {"disabled", p.disabled_total}, {"kept_last", p.kept_last_total},
                       {"deferred", p.deferred_total}, {"redisabled_by_hand", p.reenabled_by_hand_total}}}};
}

Json alerts_json(const ApiSnapshot& snapshot) {
  if (!snapshot.alerts) return nullptr;
  const AlertStatus& a = *snapshot.alerts;
  return {{"queued", a.queued},
          {"webhook", {{"sent", a.webhook_sent_total}, {"failed", a.webhook_failed_total}}},
          {"telegram", {{"sent", a.telegram_sent_total}, {"failed", a.telegram_failed_total}}},
          {"dropped", a.dropped_total}};
}

Json held_records_json(const ApiSnapshot& snapshot) {
  Json out = Json::array();
  char fingerprint[9];
  for (const HeldEntry& held : snapshot.held) {
    std::snprintf(fingerprint, sizeof fingerprint, "%08x", held.fingerprint);
    out.push_back({{"kind", to_string(held.kind)},
                   {"origin", held.origin},
                   {"seq", held.seq},
                   {"signed_ms", held.signed_ms},
                   {"fingerprint", fingerprint}});
  }
  return out;
}

std::shared_ptr<const SharedBody> routes_body(const ApiSnapshot& snapshot) {
  std::call_once(snapshot.routes_once, [&] {
    Json routes = Json::array();
    if (snapshot.roster && snapshot.evaluation) {
      for (std::size_t i = 0; i < snapshot.roster->routes.size(); ++i) {
        routes.push_back(route_json(snapshot, i));
      }
    }
    snapshot.routes_json = std::make_shared<const SharedBody>(routes.dump());
  });
  return snapshot.routes_json;
}

std::shared_ptr<const SharedBody> servers_body(const ApiSnapshot& snapshot) {
  std::call_once(snapshot.servers_once, [&] {
    Json servers = Json::array();
    for (const ServerState& server : snapshot.servers) servers.push_back(server_json(snapshot, server));
    snapshot.servers_json = std::make_shared<const SharedBody>(servers.dump());
  });
  return snapshot.servers_json;
}

}  // namespace mesh::api
