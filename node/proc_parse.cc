#include "node/proc_parse.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstddef>

namespace mesh::node {
namespace {

constexpr std::uint64_t kPermille = 1000;
constexpr std::size_t kCpuFieldsUsed = 8;    // user nice system idle iowait irq softirq steal
constexpr std::size_t kNetDevRxBytesField = 0;  // after "iface:"
constexpr std::size_t kNetDevTxBytesField = 8;  // 8 receive columns come first
constexpr std::uint32_t kTcpStateEstablished = 0x01;
constexpr std::size_t kLoadavgFractionDigits = 3;

// Calls fn(line) for each line, without the newline.
template <class Fn>
void for_each_line(std::string_view text, Fn&& fn) {
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    fn(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
}

// The next whitespace-separated field of `text`, consumed; empty at the end.
std::string_view next_field(std::string_view& text) {
  const std::size_t begin = text.find_first_not_of(" \t");
  if (begin == std::string_view::npos) {
    text = {};
    return {};
  }
  text.remove_prefix(begin);
  const std::size_t end = std::min(text.find_first_of(" \t"), text.size());
  const std::string_view field = text.substr(0, end);
  text.remove_prefix(end);
  return field;
}

// A leading unsigned decimal (or hex) number of `text`; 0 when there is none.
std::uint64_t to_number(std::string_view text, int base = 10) {
  std::uint64_t value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value, base);
  return value;
}

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

}  // namespace

CpuTimes parse_proc_stat(std::string_view text) {
  CpuTimes times;
  for_each_line(text, [&](std::string_view line) {
    if (!starts_with(line, "cpu ")) return;
    line.remove_prefix(3);
    std::array<std::uint64_t, kCpuFieldsUsed> fields{};
    for (auto& field : fields) field = to_number(next_field(line));
    const std::uint64_t idle = fields[3] + fields[4];
    for (const auto field : fields) times.total += field;
    times.busy = times.total - idle;
  });
  return times;
}

std::uint32_t cpu_permille(const CpuTimes& before, const CpuTimes& now) {
  if (now.total <= before.total || now.busy < before.busy) return 0;
  const std::uint64_t busy = now.busy - before.busy;
  const std::uint64_t total = now.total - before.total;
  return static_cast<std::uint32_t>(std::min(kPermille, busy * kPermille / total));
}

MemoryInfo parse_meminfo(std::string_view text) {
  MemoryInfo info;
  bool has_available = false;
  std::uint64_t free_kib = 0;
  for_each_line(text, [&](std::string_view line) {
    std::string_view rest = line;
    const std::string_view key = next_field(rest);
    const std::uint64_t value_kib = to_number(next_field(rest));
    if (key == "MemTotal:") info.total_kib = value_kib;
    if (key == "MemAvailable:") {
      info.available_kib = value_kib;
      has_available = true;
    }
    if (key == "MemFree:" || key == "Buffers:" || key == "Cached:") free_kib += value_kib;
  });
  if (!has_available) info.available_kib = free_kib;
  return info;
}

NetCounters parse_net_dev(std::string_view text) {
  NetCounters counters;
  for_each_line(text, [&](std::string_view line) {
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) return;  // the two header lines have none
    std::string_view name = line.substr(0, colon);
    name.remove_prefix(std::min(name.find_first_not_of(' '), name.size()));
    if (name == "lo") return;
    std::string_view rest = line.substr(colon + 1);
    for (std::size_t field = 0; field <= kNetDevTxBytesField; ++field) {
      const std::uint64_t value = to_number(next_field(rest));
      if (field == kNetDevRxBytesField) counters.rx_bytes += value;
      if (field == kNetDevTxBytesField) counters.tx_bytes += value;
    }
  });
  return counters;
}

std::uint32_t parse_loadavg_milli(std::string_view text) {
  const std::string_view load = next_field(text);
  const std::size_t dot = load.find('.');
  std::uint64_t milli = to_number(load.substr(0, dot)) * kPermille;
  if (dot != std::string_view::npos) {
    const std::string_view fraction = load.substr(dot + 1, kLoadavgFractionDigits);
    std::uint64_t scale = kPermille;
    for (const char digit : fraction) {
      if (digit < '0' || digit > '9') break;
      scale /= 10;
      milli += static_cast<std::uint64_t>(digit - '0') * scale;
    }
  }
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(milli, UINT32_MAX));
}

std::uint64_t parse_uptime_s(std::string_view text) { return to_number(next_field(text)); }

// "  0: 0100007F:01BB 0100007F:C350 01 ..." (sl, local, remote, state).
bool is_established_on_port(std::string_view line, std::uint16_t port) {
  const std::string_view slot = next_field(line);
  if (slot.empty() || slot.back() != ':') return false;  // the header line
  const std::string_view local = next_field(line);
  next_field(line);  // remote address
  const std::string_view state = next_field(line);
  const std::size_t colon = local.rfind(':');
  if (colon == std::string_view::npos || state.empty()) return false;
  return to_number(state, 16) == kTcpStateEstablished &&
         to_number(local.substr(colon + 1), 16) == port;
}

std::uint32_t count_established_on_port(std::string_view text, std::uint16_t port) {
  std::uint32_t count = 0;
  for_each_line(text, [&](std::string_view line) {
    if (is_established_on_port(line, port)) ++count;
  });
  return count;
}

}  // namespace mesh::node
