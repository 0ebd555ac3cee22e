// The /proc parsers (node/proc_parse.h) on fixed sample text, including
// missing and broken input: a strange file costs one metric, never a crash.
#include "node/proc_parse.h"

#include <doctest/doctest.h>

namespace mesh::node {
namespace {

constexpr std::string_view kStat =
    "cpu  82138 10 9283 88006 479 5 111 294 7 0\n"
    "cpu0 39837 0 4386 45689 61 0 20 148 0 0\n"
    "intr 1234 0 0\n";

TEST_CASE("/proc/stat: busy and total jiffies of the aggregate line") {
  const CpuTimes times = parse_proc_stat(kStat);
  CHECK(times.total == 82138 + 10 + 9283 + 88006 + 479 + 5 + 111 + 294);
  CHECK(times.busy == times.total - 88006 - 479);
  CHECK(parse_proc_stat("").total == 0);
  CHECK(parse_proc_stat("cpu  x y z\n").total == 0);
}

TEST_CASE("cpu permille between two readings, and since boot") {
  CHECK(cpu_permille({100, 1000}, {400, 2000}) == 300);
  CHECK(cpu_permille({}, {250, 1000}) == 250);
  CHECK(cpu_permille({100, 1000}, {100, 1000}) == 0);  // no time passed
  CHECK(cpu_permille({500, 2000}, {100, 1000}) == 0);  // counters went back
}

TEST_CASE("/proc/meminfo: MemTotal and MemAvailable, or an estimate on old kernels") {
  const MemoryInfo info = parse_meminfo(
      "MemTotal:       24683584 kB\nMemFree:        22957200 kB\n"
      "MemAvailable:   23137596 kB\nBuffers:            4736 kB\n");
  CHECK(info.total_kib == 24683584);
  CHECK(info.available_kib == 23137596);
  const MemoryInfo old = parse_meminfo(
      "MemTotal: 1000 kB\nMemFree: 100 kB\nBuffers: 20 kB\nCached: 300 kB\n");
  CHECK(old.available_kib == 420);
  CHECK(parse_meminfo("garbage").total_kib == 0);
}

TEST_CASE("/proc/net/dev: bytes summed over every interface but lo") {
  constexpr std::string_view kNetDev =
      "Inter-|   Receive                                                |  Transmit\n"
      " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs "
      "drop fifo colls carrier compressed\n"
      "    lo:    3267      29    0    0    0     0          0         0     3267      29    0 "
      "   0    0     0       0          0\n"
      "  eth0: 1000 10 0 0 0 0 0 0 2000 20 0 0 0 0 0 0\n"
      "wg0:500 5 0 0 0 0 0 0 700 7 0 0 0 0 0 0\n";
  const NetCounters counters = parse_net_dev(kNetDev);
  CHECK(counters.rx_bytes == 1500);
  CHECK(counters.tx_bytes == 2700);
  CHECK(parse_net_dev("eth0: broken\n").rx_bytes == 0);
}

TEST_CASE("/proc/loadavg and /proc/uptime") {
  CHECK(parse_loadavg_milli("4.46 2.11 1.02 8/124 9831\n") == 4460);
  CHECK(parse_loadavg_milli("0.05 0.10 0.20 1/1 1\n") == 50);
  CHECK(parse_loadavg_milli("12.3456 1 1 1/1 1") == 12345);
  CHECK(parse_loadavg_milli("7 1 1") == 7000);
  CHECK(parse_loadavg_milli("") == 0);
  CHECK(parse_uptime_s("903.48 880.06\n") == 903);
  CHECK(parse_uptime_s("nonsense") == 0);
}

TEST_CASE("/proc/net/tcp and tcp6: established connections on the listener port") {
  constexpr std::string_view kTcp =
      "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  "
      "timeout inode\n"
      "   0: 00000000:01BB 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0 0 1\n"
      "   1: 0100007F:01BB 0100007F:C350 01 00000000:00000000 00:00000000 00000000     0 0 2\n"
      "   2: 0200007F:01BB 0100007F:C351 01 00000000:00000000 00:00000000 00000000     0 0 3\n"
      "   3: 0100007F:C350 0100007F:01BB 01 00000000:00000000 00:00000000 00000000     0 0 4\n"
      "   4: 0100007F:01BB 0100007F:C352 06 00000000:00000000 00:00000000 00000000     0 0 5\n";
  CHECK(count_established_on_port(kTcp, 443) == 2);  // listening, client side, TIME_WAIT excluded
  CHECK(count_established_on_port(kTcp, 50000) == 1);
  constexpr std::string_view kTcp6Line =
      "   0: 0000000000000000FFFF00000100007F:01BB 0000000000000000FFFF00000100007F:D2F0 01 "
      "00000000:00000000 00:00000000 00000000     0        0 7 1";
  CHECK(is_established_on_port(kTcp6Line, 443));
  CHECK_FALSE(is_established_on_port(kTcp6Line, 80));
  CHECK_FALSE(is_established_on_port("   7: broken", 443));
  CHECK(count_established_on_port("", 443) == 0);
}

}  // namespace
}  // namespace mesh::node
