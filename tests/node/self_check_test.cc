// The self-checker (node/self_check.h) on a real io_context: the listener
// check against a live TLS listener and a closed port, the service check,
// the reasons; and the metrics sampler over fixture /proc files.
#include "node/self_check.h"

#include <stdlib.h>

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include <boost/asio/io_context.hpp>

#include "node/metrics.h"
#include "tests/node/test_servers.h"

namespace mesh::node {
namespace {

// A fresh directory, removed with its contents on destruction.
class TempDir {
 public:
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "meshnode-test-XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path_ = pattern;
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  void write(const std::string& name, const std::string& text) const {
    std::filesystem::create_directories((path_ / name).parent_path());
    std::ofstream(path_ / name) << text;
  }

 private:
  std::filesystem::path path_;
};

agent::SelfCheckOutcome run_once(boost::asio::io_context& io, const SelfCheckSettings& settings) {
  SelfChecker checker(io, settings);
  std::optional<agent::SelfCheckOutcome> outcome;
  int calls = 0;
  checker.run([&](agent::SelfCheckOutcome result) {
    ++calls;
    outcome = std::move(result);
  });
  REQUIRE(test::run_until(io, [&] { return outcome.has_value(); }));
  io.poll();
  CHECK(calls == 1);
  return *outcome;
}

SelfCheckSettings listener_at(std::uint16_t port, const std::string& service) {
  SelfCheckSettings settings;
  settings.listener = Endpoint{"127.0.0.1", port};
  settings.listener_tls = true;
  settings.listener_sni = "self.example.com";
  settings.listener_timeout_ms = 2'000;
  settings.service = parse_service_spec(service).value();
  settings.exec_timeout_ms = 2'000;
  settings.data_dir = std::filesystem::temp_directory_path().string();
  return settings;
}

TEST_CASE("a live TLS listener and a running service: all ok, no reason, metrics filled") {
  boost::asio::io_context io;
  test::TestServer server(io, test::ServerMode::tls);
  const auto outcome = run_once(io, listener_at(server.port(), "exec:true"));
  CHECK(outcome.self_check.listener_ok);
  CHECK(outcome.self_check.service_ok);
  CHECK(outcome.self_check.reason.empty());
  CHECK(server.last_sni() == "self.example.com");
  CHECK(outcome.metrics.memory_total_kib > 0);
  CHECK(outcome.metrics.disk_total_mib > 0);
  CHECK(outcome.metrics.uptime_s > 0);
}

TEST_CASE("a closed listener port and a failing service: both false, both named") {
  boost::asio::io_context io;
  const std::uint16_t port = test::closed_port();
  const auto outcome = run_once(io, listener_at(port, "exec:false"));
  CHECK_FALSE(outcome.self_check.listener_ok);
  CHECK_FALSE(outcome.self_check.service_ok);
  CHECK(outcome.self_check.reason ==
        "listener 127.0.0.1:" + std::to_string(port) + ": tcp_refused; service exec:false: exit 1");
}

TEST_CASE("a hung service check times out; the reason fits the report") {
  boost::asio::io_context io;
  test::TestServer server(io, test::ServerMode::tls);
  SelfCheckSettings settings = listener_at(server.port(), "exec:sleep 10");
  settings.exec_timeout_ms = 300;
  const auto outcome = run_once(io, settings);
  CHECK(outcome.self_check.listener_ok);
  CHECK_FALSE(outcome.self_check.service_ok);
  CHECK(outcome.self_check.reason == "service exec:sleep 10: timed out after 300 ms");

  settings.service = parse_service_spec("exec:exit 4 # " + std::string(200, 'x')).value();
  const auto long_reason = run_once(io, settings);
  CHECK(long_reason.self_check.reason.size() <= kSelfCheckReasonBytesMax);
}

TEST_CASE("no listener and no service: nothing to fail") {
  boost::asio::io_context io;
  const SelfCheckSettings nothing_to_check;
  const auto outcome = run_once(io, nothing_to_check);
  CHECK(outcome.self_check == SelfCheck{});
}

TEST_CASE("overlapping runs each call done once") {
  boost::asio::io_context io;
  test::TestServer server(io, test::ServerMode::tls);
  SelfChecker checker(io, listener_at(server.port(), "exec:true"));
  int calls = 0;
  for (int i = 0; i < 3; ++i) checker.run([&](agent::SelfCheckOutcome) { ++calls; });
  REQUIRE(test::run_until(io, [&] { return calls == 3; }));
  io.poll();
  CHECK(calls == 3);
}

void write_proc_fixture(const TempDir& proc, std::uint64_t busy_user, std::uint64_t idle) {
  proc.write("stat", "cpu  " + std::to_string(busy_user) + " 0 0 " + std::to_string(idle) +
                         " 0 0 0 0 0 0\ncpu0 1 0 0 1 0 0 0 0 0 0\n");
  proc.write("meminfo", "MemTotal: 2000 kB\nMemFree: 100 kB\nMemAvailable: 500 kB\n");
  proc.write("net/dev", "h1\nh2\n    lo: 99 1 0 0 0 0 0 0 99 1 0 0 0 0 0 0\n"
                        "  eth0: 10000 1 0 0 0 0 0 0 20000 1 0 0 0 0 0 0\n");
  proc.write("loadavg", "1.50 1.00 0.50 1/100 42\n");
  proc.write("uptime", "100.25 150.00\n");
  proc.write("net/tcp",
             "  sl  local_address rem_address   st\n"
             "   0: 0100007F:01BB 0100007F:C350 01 0\n"
             "   1: 0100007F:01BB 0100007F:C351 01 0\n");
  proc.write("net/tcp6",
             "  sl  local_address rem_address   st\n"
             "   0: 00000000000000000000000001000000:01BB "
             "00000000000000000000000001000000:D000 01 0\n");
}

TEST_CASE("metrics from /proc files: since boot first, then deltas") {
  const TempDir proc;
  write_proc_fixture(proc, 250, 750);
  MetricsSampler sampler(proc.path().string(), proc.path().string(), 443);
  const Metrics first = sampler.sample();
  CHECK(first.cpu_permille == 250);
  CHECK(first.memory_total_kib == 2000);
  CHECK(first.memory_used_kib == 1500);
  CHECK(first.net_rx_bytes_per_s == 100);  // 10000 B over 100 s of uptime; lo excluded
  CHECK(first.net_tx_bytes_per_s == 200);
  CHECK(first.load_average_milli == 1500);
  CHECK(first.uptime_s == 100);
  CHECK(first.listener_connections == 3);
  CHECK(first.disk_total_mib > 0);
  CHECK(first.disk_used_mib <= first.disk_total_mib);

  write_proc_fixture(proc, 250 + 900, 750 + 100);
  CHECK(sampler.sample().cpu_permille == 900);
}

TEST_CASE("the listener's connections are counted once per interval, repeated between") {
  const TempDir proc;
  write_proc_fixture(proc, 250, 750);
  MetricsSampler hourly(proc.path().string(), "", 443, std::chrono::hours(1));
  MetricsSampler every_time(proc.path().string(), "", 443, std::chrono::milliseconds(0));
  CHECK(hourly.sample().listener_connections == 3);
  CHECK(every_time.sample().listener_connections == 3);
  proc.write("net/tcp", "  sl  local_address rem_address   st\n"
                        "   0: 0100007F:01BB 0100007F:C350 01 0\n");
  CHECK(hourly.sample().listener_connections == 3);  // the tables are not read again within the interval
  CHECK(every_time.sample().listener_connections == 2);
}

TEST_CASE("metrics with no /proc at all are zero, not a crash") {
  MetricsSampler sampler("/nonexistent/proc", "", 443);
  CHECK(sampler.sample() == Metrics{});
}

}  // namespace
}  // namespace mesh::node
