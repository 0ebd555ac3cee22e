// The node's metrics for its report (record/report.h, Metrics): CPU, memory,
// disk of the data directory, network rates, load, uptime and the
// established connections on the traffic listener's port. Read from /proc
// and statvfs(); parsing is in node/proc_parse.h.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "node/proc_parse.h"
#include "record/report.h"

namespace mesh::node {

// Lines of /proc/net/tcp{,6} examined; listener_connections saturates here.
inline constexpr std::size_t kTcpTableLinesMax = 1'000'000;

// How often the listener's connections are counted. The count reads the
// kernel's whole TCP tables, formatted as text: every socket of the
// machine, each read restarting the kernel's walk of its hash. Since the
// self-check runs every 15 s (issue 37) that walk was a sixth of an idle
// daemon's CPU at N = 100 (perf, 2026-12-06), and on a VPN server with tens
// of thousands of connections it costs far more. The count is the report's
// information (record/report.h, Metrics), no verdict's input: once a
// minute, as before issue 37, and the samples between repeat it.
inline constexpr std::chrono::milliseconds kListenerCountInterval{60'000};

// Thread safety: not thread-safe; sample() blocks on file reads, so the
// self-checker calls it from its worker thread only. Rates (CPU, network)
// are deltas since the previous sample(); the first one gives the average
// since boot.
class MetricsSampler {
 public:
  // `proc_root` is "/proc" outside tests. `data_dir` empty: disk metrics 0.
  MetricsSampler(std::string proc_root, std::string data_dir, std::uint16_t listener_port,
                 std::chrono::milliseconds count_interval = kListenerCountInterval);

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
  std::chrono::milliseconds count_interval_;
  std::uint32_t connections_ = 0;
  std::optional<Clock::time_point> counted_at_;  // none: never counted
};

}  // namespace mesh::node
