// Pure parsers for the Linux /proc files the metrics come from
// (node/metrics.h). Each takes the file's text and never fails: a missing
// or unparsable field reads as 0, so a strange kernel costs one metric,
// never the report. Tests feed them fixed sample text.
#pragma once

#include <cstdint>
#include <string_view>

namespace mesh::node {

// Jiffies from the aggregate "cpu " line of /proc/stat. Idle is idle +
// iowait; busy is user + nice + system + irq + softirq + steal (guest time
// is already inside user and nice).
struct CpuTimes {
  std::uint64_t busy = 0;
  std::uint64_t total = 0;
};
CpuTimes parse_proc_stat(std::string_view text);

// Busy share between two readings, 0..1000 (all cores together: per core
// summed / cores). `before` = {} gives the share since boot. 0 when no time
// passed or a counter went backwards.
std::uint32_t cpu_permille(const CpuTimes& before, const CpuTimes& now);

// /proc/meminfo: MemTotal and MemAvailable (kB = KiB in that file). A
// kernel without MemAvailable (< 3.14) reads as MemFree + Buffers + Cached.
struct MemoryInfo {
  std::uint64_t total_kib = 0;
  std::uint64_t available_kib = 0;
};
MemoryInfo parse_meminfo(std::string_view text);

// /proc/net/dev: received and transmitted bytes summed over every interface
// but "lo".
struct NetCounters {
  std::uint64_t rx_bytes = 0;
  std::uint64_t tx_bytes = 0;
};
NetCounters parse_net_dev(std::string_view text);

// /proc/loadavg: the 1-minute load average × 1000 ("0.52 ..." → 520),
// integer arithmetic, fraction digits past the third ignored.
std::uint32_t parse_loadavg_milli(std::string_view text);

// /proc/uptime: whole seconds since boot ("3605.71 ..." → 3605).
std::uint64_t parse_uptime_s(std::string_view text);

// One line of /proc/net/tcp or /proc/net/tcp6: true when it is an
// ESTABLISHED (state 01) connection whose local port is `port`. Header
// lines and malformed lines are false.
bool is_established_on_port(std::string_view line, std::uint16_t port);

// is_established_on_port over every line of `text`.
std::uint32_t count_established_on_port(std::string_view text, std::uint16_t port);

}  // namespace mesh::node
