#include "node/agent/clock_watch.h"

#include <algorithm>
#include <map>
#include <vector>

namespace mesh::agent {

const char* to_string(ClockSuspect suspect) {
  switch (suspect) {
    case ClockSuspect::none: return "none";
    case ClockSuspect::ahead: return "ahead";
    case ClockSuspect::behind: return "behind";
  }
  return "unknown";
}

void ClockWatch::on_arrival(std::uint32_t origin, UnixMs timestamp_ms, UnixMs now) {
  arrivals_.push_back(Arrival{now, origin, now - timestamp_ms});
  if (arrivals_.size() > kArrivalsMax) arrivals_.pop_front();
}

void ClockWatch::on_future_total(std::uint64_t total, UnixMs now) {
  if (total < future_total_) future_total_ = total;  // a new core: start over
  for (std::uint64_t k = future_total_; k < total; ++k) {
    refusals_.push_back(now);
    if (refusals_.size() > kArrivalsMax) refusals_.pop_front();
  }
  future_total_ = total;
}

ClockState ClockWatch::state(UnixMs now, const Parameters& params) const {
  const UnixMs since = now - 2 * params.heartbeat_interval_ms;
  // The latest arrival age per origin inside the window.
  std::map<std::uint32_t, DurationMs> latest;
  for (const Arrival& arrival : arrivals_) {
    if (arrival.at >= since && arrival.at <= now) latest[arrival.origin] = arrival.age_ms;
  }
  const auto refused = static_cast<std::size_t>(
      std::count_if(refusals_.begin(), refusals_.end(), [&](UnixMs at) { return at >= since && at <= now; }));
  if (refused >= kOriginsMin && latest.size() < refused) {
    return ClockState{ClockSuspect::behind, params.max_clock_skew_ms};
  }
  if (latest.size() < kOriginsMin) return {};
  // The youngest arrival: records SYNCed in late (a stopped agent's last
  // report) can be old, but a clock that runs ahead makes even the freshest
  // push arrive old; one fresh arrival disproves it.
  DurationMs youngest = latest.begin()->second;
  for (const auto& [origin, age] : latest) youngest = std::min(youngest, age);
  if (youngest > params.stale_after_ms / 2) return ClockState{ClockSuspect::ahead, youngest};
  return {};
}

}  // namespace mesh::agent
