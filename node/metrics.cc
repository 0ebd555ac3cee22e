#include "node/metrics.h"

#include <sys/statvfs.h>

#include <algorithm>
#include <fstream>
#include <utility>

#include "node/text_file.h"

namespace mesh::node {
namespace {

constexpr std::uint64_t kMillisecondsPerSecond = 1000;
constexpr unsigned kBytesToMibShift = 20;

// (now − before) per second over `elapsed_ms`; 0 when a counter went back
// (an interface disappeared) or no time passed.
std::uint64_t rate_per_s(std::uint64_t before, std::uint64_t now, std::int64_t elapsed_ms) {
  if (now < before || elapsed_ms <= 0) return 0;
  return (now - before) * kMillisecondsPerSecond / static_cast<std::uint64_t>(elapsed_ms);
}

}  // namespace

MetricsSampler::MetricsSampler(std::string proc_root, std::string data_dir,
                               std::uint16_t listener_port, std::chrono::milliseconds count_interval)
    : proc_root_(std::move(proc_root)),
      data_dir_(std::move(data_dir)),
      listener_port_(listener_port),
      count_interval_(count_interval) {}

std::string MetricsSampler::proc_file(const char* name) const { return proc_root_ + "/" + name; }

Metrics MetricsSampler::sample() {
  Metrics metrics;
  sample_cpu(metrics);
  const MemoryInfo memory = parse_meminfo(read_text_file(proc_file("meminfo")));
  metrics.memory_total_kib = memory.total_kib;
  metrics.memory_used_kib =
      memory.total_kib > memory.available_kib ? memory.total_kib - memory.available_kib : 0;
  sample_disk(metrics);
  metrics.uptime_s = parse_uptime_s(read_text_file(proc_file("uptime")));
  sample_network(metrics, metrics.uptime_s);
  metrics.load_average_milli = parse_loadavg_milli(read_text_file(proc_file("loadavg")));
  const Clock::time_point now = Clock::now();
  if (!counted_at_ || now - *counted_at_ >= count_interval_ || now < *counted_at_) {
    connections_ = count_listener_connections();
    counted_at_ = now;
  }
  metrics.listener_connections = connections_;
  return metrics;
}

void MetricsSampler::sample_cpu(Metrics& metrics) {
  const CpuTimes now = parse_proc_stat(read_text_file(proc_file("stat")));
  metrics.cpu_permille = cpu_permille(last_cpu_, now);
  last_cpu_ = now;
}

// The first sample averages over the uptime; later ones over the time
// since the previous sample.
void MetricsSampler::sample_network(Metrics& metrics, std::uint64_t uptime_s) {
  const NetCounters now = parse_net_dev(read_text_file(proc_file("net/dev")));
  const Clock::time_point now_time = Clock::now();
  if (has_last_net_) {
    const auto elapsed_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(now_time - last_net_time_).count();
    metrics.net_rx_bytes_per_s = rate_per_s(last_net_.rx_bytes, now.rx_bytes, elapsed_ms);
    metrics.net_tx_bytes_per_s = rate_per_s(last_net_.tx_bytes, now.tx_bytes, elapsed_ms);
  } else if (uptime_s > 0) {
    metrics.net_rx_bytes_per_s = now.rx_bytes / uptime_s;
    metrics.net_tx_bytes_per_s = now.tx_bytes / uptime_s;
  }
  last_net_ = now;
  last_net_time_ = now_time;
  has_last_net_ = true;
}

void MetricsSampler::sample_disk(Metrics& metrics) const {
  struct statvfs fs {};
  if (data_dir_.empty() || ::statvfs(data_dir_.c_str(), &fs) != 0) return;
  const std::uint64_t block_bytes = fs.f_frsize;
  metrics.disk_total_mib = (fs.f_blocks * block_bytes) >> kBytesToMibShift;
  metrics.disk_used_mib = ((fs.f_blocks - fs.f_bfree) * block_bytes) >> kBytesToMibShift;
}

// Streams the tables line by line: on a busy server they run to megabytes.
std::uint32_t MetricsSampler::count_listener_connections() const {
  if (listener_port_ == 0) return 0;
  std::uint32_t count = 0;
  std::size_t lines = 0;
  for (const char* table : {"net/tcp", "net/tcp6"}) {
    std::ifstream file(proc_file(table));
    std::string line;
    while (lines < kTcpTableLinesMax && std::getline(file, line)) {
      ++lines;
      if (is_established_on_port(line, listener_port_)) ++count;
    }
  }
  return count;
}

}  // namespace mesh::node
