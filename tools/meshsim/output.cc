#include "tools/meshsim/output.h"

#include <cinttypes>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "tools/meshsim/duration.h"

namespace mesh::sim {
namespace {

using nlohmann::json;

json per_day(const PerNodeDay& value) {
  return {{"mean", static_cast<std::uint64_t>(value.mean)}, {"max", static_cast<std::uint64_t>(value.max)}};
}

json node_json(const NodeSnapshot& node) {
  json servers = json::array();
  for (const ServerBrief& s : node.servers) {
    json split = json::object();
    for (const auto& row : s.by_country) {
      split[row.country] = {{"failing", row.failing}, {"eligible", row.eligible}};
    }
    json flags = json::array();
    for (std::string_view flag : verdict::flag_names(s.flags)) flags.push_back(flag);
    servers.push_back({{"id", s.id}, {"status", verdict::to_string(s.status)}, {"flags", flags},
                       {"failing", s.failing}, {"eligible", s.eligible}, {"by_country", split}});
  }
  json routes = json::array();
  for (const RouteBrief& r : node.routes) {
    routes.push_back({{"route", r.route_id}, {"members", r.members}, {"degraded", r.degraded}});
  }
  return {{"id", node.id}, {"digest", node.digest_hex}, {"verdict_digest", node.verdict_digest},
          {"servers", servers}, {"routes", routes}, {"unreliable_observers", node.unreliable_observers},
          {"partitioned", node.partitioned}};
}

json snapshot_json(const Snapshot& snapshot) {
  json nodes = json::array();
  for (const NodeSnapshot& node : snapshot.nodes) nodes.push_back(node_json(node));
  return {{"at_ms", snapshot.at_ms}, {"at", format_duration(snapshot.at_ms)},
          {"running_nodes", snapshot.running_nodes}, {"digest_groups", snapshot.digest_groups},
          {"digests_agree", snapshot.digest_groups == 1}, {"evaluated_nodes", snapshot.evaluated_nodes},
          {"verdict_groups", snapshot.verdict_groups}, {"nodes", nodes}};
}

json expectations_json(const RunResult& result) {
  json out = json::array();
  for (const ExpectationResult& e : result.expectations) {
    json item = {{"expectation", e.text}, {"passed", e.passed}, {"detail", e.detail}};
    if (e.time_ms) item["time_ms"] = *e.time_ms;
    out.push_back(item);
  }
  return out;
}

json examples_json(const std::vector<WrongVerdict>& wrong) {
  json examples = json::array();
  for (const WrongVerdict& w : wrong) {
    json example = {{"at_ms", w.at_ms}, {"node", w.node}, {"server", w.server},
                    {"status", verdict::to_string(w.status)}};
    if (w.held_back) example["held_back"] = true;
    examples.push_back(example);
  }
  return examples;
}

json false_json(const RunResult& result) {
  return {{"count", result.false_verdicts}, {"grace_ms", result.false_verdict_grace_ms},
          {"examples", examples_json(result.false_examples)}};
}

json missed_json(const RunResult& result) {
  return {{"count", result.missed_verdicts}, {"held_back", result.missed_held_back},
          {"detection_bound_ms", result.detection_bound_ms},
          {"examples", examples_json(result.missed_examples)}};
}

json metrics_json(const RunResult& r) {
  const Dissemination& d = r.dissemination;
  return {
      {"measured_from_ms", r.measured_from_ms},
      {"gossip_bytes_sent_per_node_day", per_day(r.gossip_sent_per_day)},
      {"gossip_bytes_received_per_node_day", per_day(r.gossip_received_per_day)},
      {"probe_bytes_per_node_day", per_day(r.probe_bytes_per_day)},
      {"gossip_floor_bytes_per_node_day", static_cast<std::uint64_t>(r.floor_bytes_per_day)},
      {"gossip_over_floor_milli", static_cast<std::uint64_t>(r.gossip_over_floor * 1000)},
      {"duplicate_factor_milli", static_cast<std::uint64_t>(r.duplicate_factor * 1000)},
      {"dissemination",
       {{"records", d.records}, {"completed", d.completed}, {"incomplete", d.incomplete},
        {"rounds_mean_milli", static_cast<std::uint64_t>(d.rounds_mean * 1000)},
        {"rounds_p99", d.rounds_p99}, {"rounds_max", d.rounds_max}, {"ms_max", d.ms_max},
        {"rounds_bound_milli", static_cast<std::uint64_t>(d.rounds_bound * 1000)}}},
      {"healthy_report_bytes",
       {{"count", r.healthy_reports}, {"max", r.healthy_report_bytes_max},
        {"mean", static_cast<std::uint64_t>(r.healthy_report_bytes_mean)}}},
  };
}

}  // namespace

std::string to_json(const RunResult& r, bool timing) {
  json snapshots = json::array();
  for (const Snapshot& s : r.snapshots) snapshots.push_back(snapshot_json(s));
  json out = {
      {"scenario", r.scenario}, {"seed", r.seed}, {"nodes", r.nodes}, {"duration_ms", r.duration_ms},
      {"command", r.command}, {"passed", r.passed}, {"expectations", expectations_json(r)},
      {"snapshots", snapshots}, {"false_verdicts", false_json(r)}, {"missed_verdicts", missed_json(r)},
      {"metrics", metrics_json(r)},
      {"counters", r.counters}, {"network", r.network},
      {"gossip_loss", r.gossip_loss}, {"tcp", r.tcp},
      {"checks", {{"periodic", r.checks}, {"checked_nodes", r.checked_nodes},
                  {"partitioned_flips_max", r.partitioned_flips_max},
                  {"evaluations", r.evaluations}, {"evaluations_memoized", r.evaluations_memoized}}},
      {"signatures", {{"memoized", r.signatures_memoized}, {"checks", r.signature_checks},
                      {"libsodium_verifications", r.signature_verifications}}},
      {"rosters", {{"memoized", true}, {"decodes_asked", r.roster_decodes_asked},
                   {"decodes", r.roster_decodes}}},
      {"records", {{"shared", true}, {"stored", r.records_interned}, {"objects", r.records_made}}},
      {"plans", {{"shared", true}, {"asked", r.plans_asked}, {"made", r.plans_made}}},
      {"volume", {{"nodes_tight", r.volume_nodes_tight}, {"probes_deferred", r.volume_probes_deferred},
                  {"frames_refused", r.volume_frames_refused}}},
  };
  if (timing) out["wall_seconds"] = r.wall_seconds;
  return out.dump(1) + "\n";
}

namespace {

// What the first listed node shows at a snapshot: every server that is not
// ok, with the split of the vote by observer country, and degraded routes.
// (Every evaluated node shows the same when verdict_groups is 1.)
std::string snapshot_verdict_lines(const Snapshot& s) {
  std::string out;
  for (const NodeSnapshot& node : s.nodes) {
    if (node.verdict_digest.empty()) continue;
    for (const ServerBrief& server : node.servers) {
      if (server.status == verdict::ServerStatus::ok && !server.flags.insufficient_evidence) continue;
      const char* held = server.flags.insufficient_evidence ? " (held back)" : "";
      out += "    " + node.id + " sees " + server.id + ": " + verdict::to_string(server.status) + held + ", " +
             std::to_string(server.failing) + " of " + std::to_string(server.eligible) +
             " witnesses failing; by country:";
      for (const verdict::CountryTally& c : server.by_country) {
        out += " " + c.country + " " + std::to_string(c.failing) + "/" + std::to_string(c.eligible);
      }
      out += "\n";
    }
    for (const RouteBrief& route : node.routes) {
      if (route.degraded) out += "    " + node.id + " sees route " + route.route_id + " degraded\n";
    }
    if (node.partitioned) out += "    " + node.id + " sees the fleet partitioned\n";
    break;
  }
  return out;
}

}  // namespace

std::string to_summary(const RunResult& r, bool timing) {
  std::string out;
  char line[512];
  auto add = [&](const char* format, auto... args) {
    std::snprintf(line, sizeof line, format, args...);
    out += line;
  };
  add("meshsim %s: %u nodes, %s simulated, seed %" PRIu64 "\n", r.scenario.c_str(), r.nodes,
      format_duration(r.duration_ms).c_str(), r.seed);
  for (const ExpectationResult& e : r.expectations) {
    add("  [%s] %s: %s\n", e.passed ? "pass" : "FAIL", e.text.c_str(), e.detail.c_str());
  }
  for (const Snapshot& s : r.snapshots) {
    add("  snapshot %s: %u running, %u digest group(s), %u evaluated, %u verdict group(s)\n",
        format_duration(s.at_ms).c_str(), s.running_nodes, s.digest_groups, s.evaluated_nodes,
        s.verdict_groups);
    out += snapshot_verdict_lines(s);
  }
  add("  false verdicts: %" PRIu64 " (grace %s)\n", r.false_verdicts,
      format_duration(r.false_verdict_grace_ms).c_str());
  add("  missed verdicts: %" PRIu64 " (%" PRIu64 " held back; detection bound %s)\n", r.missed_verdicts,
      r.missed_held_back, format_duration(r.detection_bound_ms).c_str());
  for (const WrongVerdict& w : r.false_examples) {
    add("    false: %s at %s shows %s %s\n", format_duration(w.at_ms).c_str(), w.node.c_str(), w.server.c_str(),
        verdict::to_string(w.status));
  }
  for (const WrongVerdict& w : r.missed_examples) {
    add("    missed: %s at %s shows %s %s%s\n", format_duration(w.at_ms).c_str(), w.node.c_str(),
        w.server.c_str(), verdict::to_string(w.status), w.held_back ? " (held back)" : "");
  }
  add("  metrics window: from %s to the end\n", format_duration(r.measured_from_ms).c_str());
  add("  gossip bytes/node/day: sent mean %.0f max %.0f, received mean %.0f max %.0f\n",
      r.gossip_sent_per_day.mean, r.gossip_sent_per_day.max, r.gossip_received_per_day.mean,
      r.gossip_received_per_day.max);
  add("  floor %.0f bytes/node/day; gossip / floor = %.2f\n", r.floor_bytes_per_day, r.gossip_over_floor);
  add("  probe bytes/node/day: mean %.0f max %.0f\n", r.probe_bytes_per_day.mean, r.probe_bytes_per_day.max);
  add("  duplicate factor %.3f\n", r.duplicate_factor);
  const Dissemination& d = r.dissemination;
  add("  dissemination: %" PRIu64 " records, %" PRIu64 " reached every node, rounds mean %.2f p99 %u max %u (bound 2log2N = %.1f), %" PRIu64 " incomplete\n",
      d.records, d.completed, d.rounds_mean, d.rounds_p99, d.rounds_max, d.rounds_bound, d.incomplete);
  add("  healthy report: max %" PRIu64 " bytes, mean %.0f (signed record)\n", r.healthy_report_bytes_max,
      r.healthy_report_bytes_mean);
  add("  signatures: %" PRIu64 " checks by the cores, %" PRIu64 " libsodium verifications (memoized per unique record)\n",
      r.signature_checks, r.signature_verifications);
  add("  rosters: %" PRIu64 " decodes asked by the cores, %" PRIu64 " decoded (one shared copy per unique roster)\n",
      r.roster_decodes_asked, r.roster_decodes);
  add("  records: %" PRIu64 " stored by the cores as %" PRIu64 " shared objects (one per unique record)\n",
      r.records_interned, r.records_made);
  add("  volume cap: %u nodes slowing their probes at the end, %" PRIu64 " probes deferred, %" PRIu64 " frames refused\n",
      r.volume_nodes_tight, r.volume_probes_deferred, r.volume_frames_refused);
  add("  verdicts: %" PRIu64 " evaluations (+%" PRIu64 " memoized) on %u checked nodes\n", r.evaluations,
      r.evaluations_memoized, r.checked_nodes);
  if (timing) add("  wall clock: %.2f s\n", r.wall_seconds);
  if (!r.passed) add("FAILED. Reproduce with: %s\n", r.command.c_str());
  return out;
}

}  // namespace mesh::sim
