#include "node/api/metrics_text.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

namespace mesh::api {
namespace {

class Writer {
 public:
  void family(const char* name, const char* type, const char* help) {
    out_ += "# HELP ";
    out_ += name;
    out_ += ' ';
    out_ += help;
    out_ += "\n# TYPE ";
    out_ += name;
    out_ += ' ';
    out_ += type;
    out_ += '\n';
  }
  // `labels` is already `{k="v",...}` or empty. Label values here are ids,
  // reasons and statuses: [a-z0-9._-], nothing to escape.
  void sample(const std::string& name, const std::string& labels, std::uint64_t value) {
    out_ += name + labels + ' ' + std::to_string(value) + '\n';
  }
  void sample(const std::string& name, const std::string& labels, double value) {
    char text[64];
    std::snprintf(text, sizeof text, "%.9g", value);
    out_ += name + labels + ' ' + text + '\n';
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

std::string label(const char* key, const std::string& value) {
  return std::string("{") + key + "=\"" + value + "\"}";
}

void servers(Writer& w, const ApiSnapshot& s) {
  static constexpr verdict::ServerStatus kStatuses[] = {
      verdict::ServerStatus::ok, verdict::ServerStatus::unavailable,
      verdict::ServerStatus::unreachable, verdict::ServerStatus::no_data};
  w.family("meshnode_servers", "gauge", "Servers of the roster by the status this node gives them.");
  for (auto status : kStatuses) {
    std::uint64_t count = 0;
    for (const ServerState& server : s.servers) count += server.verdict->status == status;
    w.sample("meshnode_servers", label("status", verdict::to_string(status)), count);
  }
  w.family("meshnode_server_status", "gauge", "1 for the status this node gives each server, 0 for the others.");
  for (const ServerState& server : s.servers) {
    for (auto status : kStatuses) {
      w.sample("meshnode_server_status",
               "{server=\"" + server.entry->id + "\",status=\"" + verdict::to_string(status) + "\"}",
               std::uint64_t{server.verdict->status == status});
    }
  }
  w.family("meshnode_server_witnesses_failing", "gauge", "Eligible witnesses failing to reach each server.");
  for (const ServerState& server : s.servers) {
    w.sample("meshnode_server_witnesses_failing", label("server", server.entry->id),
             std::uint64_t{server.verdict->failing});
  }
  w.family("meshnode_server_witnesses_eligible", "gauge", "Witnesses whose vote counts, for each server.");
  for (const ServerState& server : s.servers) {
    w.sample("meshnode_server_witnesses_eligible", label("server", server.entry->id),
             std::uint64_t{server.verdict->eligible});
  }
}

void probes(Writer& w, const MetricsInput& m) {
  w.family("meshnode_probe_duration_seconds", "histogram", "Probe stage durations: TCP connect, TLS handshake.");
  static const char* kStages[] = {"connect", "tls"};
  for (std::size_t stage = 0; stage < 2; ++stage) {
    const std::string base = std::string("{stage=\"") + kStages[stage] + "\"";
    for (std::size_t b = 0; b < m.duration_buckets_s.size(); ++b) {
      char le[32];
      std::snprintf(le, sizeof le, "%g", m.duration_buckets_s[b]);
      w.sample("meshnode_probe_duration_seconds_bucket", base + ",le=\"" + le + "\"}",
               m.duration_counts[stage].empty() ? std::uint64_t{0} : m.duration_counts[stage][b]);
    }
    w.sample("meshnode_probe_duration_seconds_bucket", base + ",le=\"+Inf\"}", m.duration_count[stage]);
    w.sample("meshnode_probe_duration_seconds_sum", base + "}", m.duration_sum_s[stage]);
    w.sample("meshnode_probe_duration_seconds_count", base + "}", m.duration_count[stage]);
  }
  w.family("meshnode_probes_total", "counter", "Probe outcomes: ok, or the failure reason.");
  for (const auto& [result, count] : m.probe_results) {
    w.sample("meshnode_probes_total", label("result", result), count);
  }
}

void gossip(Writer& w, const MetricsInput& m) {
  w.family("meshnode_gossip_frames_total", "counter", "Gossip frames sent and received.");
  w.sample("meshnode_gossip_frames_total", label("direction", "sent"), m.frames_sent);
  w.sample("meshnode_gossip_frames_total", label("direction", "received"), m.frames_received);
  w.family("meshnode_gossip_bytes_total", "counter", "Gossip frame bytes sent and received.");
  w.sample("meshnode_gossip_bytes_total", label("direction", "sent"), m.bytes_sent);
  w.sample("meshnode_gossip_bytes_total", label("direction", "received"), m.bytes_received);
  w.family("meshnode_gossip_inbound_connections", "gauge",
           "Accepted gossip connections open: a member's (its frame opened on it), or unauthenticated yet.");
  w.sample("meshnode_gossip_inbound_connections", label("state", "member"), m.inbound_members);
  w.sample("meshnode_gossip_inbound_connections", label("state", "unauthenticated"), m.inbound_unauthenticated);
  w.family("meshnode_gossip_drops_total", "counter", "Frames and records dropped, by reason.");
  for (const auto& [reason, count] : m.drops) w.sample("meshnode_gossip_drops_total", label("reason", reason), count);
}

// The panel API's connections (docs/API.md, "Under a connection flood").
void api_connections(Writer& w, const ApiServerStats& a) {
  w.family("meshnode_api_connections", "gauge", "Open connections to the panel API, by whether they presented a valid token.");
  w.sample("meshnode_api_connections", label("token", "valid"), a.connections_trusted);
  w.sample("meshnode_api_connections", label("token", "none"), a.connections_open - a.connections_trusted);
  w.family("meshnode_api_connections_accepted_total", "counter", "Connections the panel API accepted.");
  w.sample("meshnode_api_connections_accepted_total", "", a.connections_accepted);
  w.family("meshnode_api_connections_shed_total", "counter",
           "Connections the panel API let go of to stay available, by reason.");
  w.sample("meshnode_api_connections_shed_total", label("reason", "full"), a.connections_refused);
  w.sample("meshnode_api_connections_shed_total", label("reason", "address_full"), a.connections_refused_address);
  w.sample("meshnode_api_connections_shed_total", label("reason", "evicted"), a.connections_evicted);
  w.family("meshnode_api_accept_errors_total", "counter",
           "Connections the panel API could not accept for want of descriptors or memory.");
  w.sample("meshnode_api_accept_errors_total", "", a.accept_errors);
}

// Route membership as the panel reads it (GET /v1/routes): how many of a
// route's servers are in rotation, how many it has, whether it is degraded.
void routes(Writer& w, const ApiSnapshot& s) {
  const bool held = s.roster && s.evaluation;
  const std::size_t count = held ? s.roster->routes.size() : 0;
  auto id = [&](std::size_t i) { return label("route", s.roster->routes[i].id); };
  w.family("meshnode_route_servers_in_rotation", "gauge",
           "Servers of each route in rotation (a degraded route: the best available it serves).");
  for (std::size_t i = 0; i < count; ++i) {
    w.sample("meshnode_route_servers_in_rotation", id(i),
             static_cast<std::uint64_t>(s.evaluation->routes[i].members.size()));
  }
  w.family("meshnode_route_servers", "gauge", "Servers of each route in the roster.");
  for (std::size_t i = 0; i < count; ++i) {
    const std::string& route = s.roster->routes[i].id;
    std::uint64_t members = 0;
    for (const ServerEntry& server : s.roster->servers) {
      members += std::find(server.routes.begin(), server.routes.end(), route) != server.routes.end();
    }
    w.sample("meshnode_route_servers", id(i), members);
  }
  w.family("meshnode_route_degraded", "gauge",
           "1 when no server of the route is in rotation and it serves the best available.");
  for (std::size_t i = 0; i < count; ++i) {
    w.sample("meshnode_route_degraded", id(i), std::uint64_t{s.evaluation->routes[i].degraded});
  }
}

// The mesh as this node sees it, and whether it is doing its whole job.
void node_state(Writer& w, const ApiSnapshot& s) {
  std::uint64_t connected = 0;
  for (const PeerState& peer : s.peers) connected += peer.connected;
  w.family("meshnode_peers", "gauge", "Gossip peers this node holds a link to.");
  w.sample("meshnode_peers", "", static_cast<std::uint64_t>(s.peers.size()));
  w.family("meshnode_peers_connected", "gauge", "Gossip peers connected now.");
  w.sample("meshnode_peers_connected", "", connected);
  w.family("meshnode_partitioned", "gauge",
           "1 while this node's evidence looks like a split fleet and no unreachable verdict is made.");
  w.sample("meshnode_partitioned", "", std::uint64_t{s.evaluation != nullptr && s.evaluation->partitioned});
  w.family("meshnode_starting", "gauge", "1 while the node has just started and may not have heard from the fleet yet.");
  w.sample("meshnode_starting", "", std::uint64_t{s.starting});
  w.family("meshnode_healthy", "gauge", "1 when GET /healthz answers 200, 0 while a problem stands.");
  w.sample("meshnode_healthy", "", std::uint64_t{s.problems.empty()});
  w.family("meshnode_problem", "gauge", "1 for each problem that stands (GET /healthz says why), 0 for the others.");
  for (const char* code : kHealthProblemCodes) {
    const bool stands = std::any_of(s.problems.begin(), s.problems.end(),
                                    [&](const HealthProblem& p) { return p.code == code; });
    w.sample("meshnode_problem", label("problem", code), std::uint64_t{stands});
  }
}

// The panel sync and the alerts (docs/PANELS.md), when configured.
void panel(Writer& w, const ApiSnapshot& s) {
  if (const auto& p = s.panel_sync) {
    w.family("meshnode_panel_sync_owner", "gauge", "1 while this node writes to the panel (the sync owner), else 0.");
    w.sample("meshnode_panel_sync_owner", "", std::uint64_t{p->right == "owner"});
    w.family("meshnode_panel_rounds_total", "counter", "Panel sync rounds started (read, compare, write).");
    w.sample("meshnode_panel_rounds_total", "", p->rounds_total);
    w.family("meshnode_panel_failures_total", "counter", "Panel sync rounds that failed (no answer, 5xx, a body off the contract).");
    w.sample("meshnode_panel_failures_total", "", p->requests_failed_total);
    w.family("meshnode_panel_failures_in_row", "gauge", "Panel sync rounds failed since the last good one.");
    w.sample("meshnode_panel_failures_in_row", "", std::uint64_t{p->failures_in_row});
    w.family("meshnode_panel_host_changes_total", "counter", "Panel hosts changed, kept or deferred by the sync, by action.");
    w.sample("meshnode_panel_host_changes_total", label("action", "enable"), p->enabled_total);
    w.sample("meshnode_panel_host_changes_total", label("action", "disable"), p->disabled_total);
    w.sample("meshnode_panel_host_changes_total", label("action", "keep_last"), p->kept_last_total);
    w.sample("meshnode_panel_host_changes_total", label("action", "defer"), p->deferred_total);
    w.sample("meshnode_panel_host_changes_total", label("action", "redisable_by_hand"), p->reenabled_by_hand_total);
  }
  if (const auto& a = s.alerts) {
    w.family("meshnode_alerts_sent_total", "counter", "Alerts delivered, by channel.");
    w.sample("meshnode_alerts_sent_total", label("channel", "webhook"), a->webhook_sent_total);
    w.sample("meshnode_alerts_sent_total", label("channel", "telegram"), a->telegram_sent_total);
    w.family("meshnode_alerts_failed_total", "counter", "Alert delivery attempts that failed (retried with backoff), by channel.");
    w.sample("meshnode_alerts_failed_total", label("channel", "webhook"), a->webhook_failed_total);
    w.sample("meshnode_alerts_failed_total", label("channel", "telegram"), a->telegram_failed_total);
    w.family("meshnode_alerts_dropped_total", "counter", "Alerts given up: the queue full, or every attempt failed.");
    w.sample("meshnode_alerts_dropped_total", "", a->dropped_total);
    w.family("meshnode_alerts_queued", "gauge", "Alerts awaiting delivery.");
    w.sample("meshnode_alerts_queued", "", std::uint64_t{a->queued});
  }
}

}  // namespace

std::string render_metrics(const ApiSnapshot& s, const ApiServerStats& server) {
  Writer w;
  w.family("meshnode_build_info", "gauge", "Always 1; the version of this meshnode.");
  w.sample("meshnode_build_info", label("version", s.version), std::uint64_t{1});
  w.family("meshnode_roster_version", "gauge", "Version of the roster this node holds (0: none).");
  w.sample("meshnode_roster_version", "", s.roster ? s.roster->version : std::uint64_t{0});
  w.family("meshnode_records", "gauge", "Signed records this node holds (the roster and one report per server).");
  w.sample("meshnode_records", "", static_cast<std::uint64_t>(s.records));
  node_state(w, s);
  servers(w, s);
  routes(w, s);
  probes(w, s.metrics);
  gossip(w, s.metrics);
  w.family("meshnode_volume_used_bytes", "gauge", "Bytes charged to today's volume account (UTC day).");
  w.sample("meshnode_volume_used_bytes", "", s.volume_used_bytes);
  w.family("meshnode_volume_cap_bytes", "gauge", "The daily volume cap in force.");
  w.sample("meshnode_volume_cap_bytes", "", s.volume_cap_bytes);
  api_connections(w, server);
  panel(w, s);
  return w.take();
}

}  // namespace mesh::api
