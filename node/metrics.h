// The node's metrics for its report (record/report.h, Metrics): CPU, memory,
// disk of the data directory, network rates, load, uptime and the
// established connections on the traffic listener's port. Read from /proc
// and statvfs(); parsing is in node/proc_parse.h.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "node/proc_parse.h"
#include "record/report.h"

namespace mesh::node {

// Lines of /proc/net/tcp{,6} examined; listener_connections saturates here.
inline constexpr std::size_t kTcpTableLinesMax = 1'000'000;

// Thread safety: not thread-safe; sample() blocks on file reads, so the
// self-checker calls it from its worker thread only. Rates (CPU, network)
// are deltas since the previous sample(); the first one gives the average
// since boot.
class MetricsSampler {
 public:
  // `proc_root` is "/proc" outside tests. `data_dir` empty: disk metrics 0.
  MetricsSampler(std::string proc_root, std::string data_dir, std::uint16_t listener_port);

  // Never fails: a missing or unparsable source gives 0 for its metric.
  Metrics sample();

 private:
  using Clock = std::chrono::steady_clock;

  void sample_cpu(Metrics& metrics);
  void sample_network(Metrics& metrics, std::uint64_t uptime_s);
  void sample_disk(Metrics& metrics) const;
  std::uint32_t count_listener_connections() const;
  std::string proc_file(const char* name) const;

  std::string proc_root_;
  std::string data_dir_;
  std::uint16_t listener_port_;
  CpuTimes last_cpu_;
  NetCounters last_net_;
  Clock::time_point last_net_time_;
  bool has_last_net_ = false;
};

}  // namespace mesh::node
