#include "verdict/observed.h"

#include <algorithm>
#include <tuple>

#include "record/fleet_scale.h"

namespace mesh::verdict {
namespace {

auto metrics_tuple(const Metrics& m) {
  return std::tie(m.cpu_permille, m.memory_used_kib, m.memory_total_kib, m.disk_used_mib,
                  m.disk_total_mib, m.net_rx_bytes_per_s, m.net_tx_bytes_per_s,
                  m.load_average_milli, m.uptime_s, m.listener_connections);
}

auto result_tuple(const ProbeResult& r) {
  return std::tie(r.target, r.fail_streak, r.ok_streak, r.last_probe_ms, r.last_ok_ms, r.reason,
                  r.recovered, r.unanswered_since_ms);
}

bool results_less(const std::vector<ProbeResult>& a, const std::vector<ProbeResult>& b) {
  return std::lexicographical_compare(
      a.begin(), a.end(), b.begin(), b.end(),
      [](const ProbeResult& x, const ProbeResult& y) { return result_tuple(x) < result_tuple(y); });
}

}  // namespace

bool report_less(const Report& a, const Report& b) {
  const SelfCheck& sa = a.self_check;
  const SelfCheck& sb = b.self_check;
  if (std::tie(sa.listener_ok, sa.service_ok, sa.reason) !=
      std::tie(sb.listener_ok, sb.service_ok, sb.reason)) {
    return std::tie(sa.listener_ok, sa.service_ok, sa.reason) <
           std::tie(sb.listener_ok, sb.service_ok, sb.reason);
  }
  if (std::tie(a.flapping.changes, a.flapping.hold_ms) != std::tie(b.flapping.changes, b.flapping.hold_ms)) {
    return std::tie(a.flapping.changes, a.flapping.hold_ms) < std::tie(b.flapping.changes, b.flapping.hold_ms);
  }
  if (metrics_tuple(a.metrics) != metrics_tuple(b.metrics)) {
    return metrics_tuple(a.metrics) < metrics_tuple(b.metrics);
  }
  if (a.view.roster_version != b.view.roster_version) {
    return a.view.roster_version < b.view.roster_version;
  }
  return results_less(a.view.results, b.view.results);
}

bool supersedes(const ObservedReport& candidate, const ObservedReport& held) {
  if (candidate.timestamp_ms != held.timestamp_ms) {
    return candidate.timestamp_ms > held.timestamp_ms;
  }
  return report_less(held.report, candidate.report);
}

bool is_fresh(const ObservedReport& observed, UnixMs now_ms, const Roster& roster) {
  // Written so that no hostile timestamp can overflow the subtraction.
  return observed.timestamp_ms >= now_ms - effective_stale_after_ms(roster.params, roster.servers.size());
}

bool view_usable(const ObservedReport& observed, UnixMs now_ms, const Roster& roster) {
  return is_fresh(observed, now_ms, roster) &&
         observed.report.view.roster_version == roster.version;
}

bool fails_share(const ObservedReport& observed, const Parameters& params,
                 std::uint32_t server_count, std::uint32_t permille) {
  ViewShare share;
  for_each_counted_result(observed, params, server_count, [&](const ProbeResult& result) { share.count(result); });
  return share.reaches(params, permille);
}

}  // namespace mesh::verdict
