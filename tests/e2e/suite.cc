#include "tests/e2e/suite.h"

#include <doctest/doctest.h>
#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

namespace mesh::test::e2e {
namespace {

std::vector<Row>& rows() {
  static std::vector<Row> all;
  return all;
}

std::string& work_dir() {
  static std::string dir;
  return dir;
}

std::unique_ptr<Fleet>& the_fleet() {
  static std::unique_ptr<Fleet> fleet;
  return fleet;
}

std::string seconds_text(std::optional<double> s) {
  if (!s) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", *s);
  return text;
}

}  // namespace

Parameters e2e_parameters() {
  Parameters params;
  params.heartbeat_interval_ms = 2'000;
  params.probe_interval_ms = 2'000;
  // Not 3 intervals as by default: gossip's own timers are not scaled down
  // with the intervals. Frames leave at 1 s ticks (measured here: a report
  // first reaches a node 2.0 s after it is signed at the median, 4.1 s at
  // worst, with no fault), a lost push waits for a 5 s IHAVE batch and a
  // 3 s GRAFT timeout, and a link cut by a block is found dead after 30 s
  // of silence (docs/PROTOCOL.md §4a) or routed around by SYNC every 30 s.
  // At the defaults (reports every 60 s, stale after 180 s) those 30 s
  // are a quarter of the margin; here stale_after keeps the same cover.
  params.stale_after_ms = 40'000;
  params.fail_streak = 3;
  return params;
}

Scenario::Scenario(std::string name, std::string expected) {
  row_.scenario = std::move(name);
  row_.expected = std::move(expected);
  std::cout << "e2e: scenario " << row_.scenario << std::endl;
}

Scenario::~Scenario() {
  std::cout << "e2e:   " << (row_.passed ? "passed" : "FAILED") << ": " << row_.seen << std::endl;
  rows().push_back(row_);
}

bool Scenario::expect(bool ok, const std::string& what) {
  CHECK_MESSAGE(ok, row_.scenario << ": " << what);
  if (!ok) {
    row_.passed = false;
    seen("NOT " + what);
  }
  return ok;
}

void Scenario::take(const Watch& watch, bool timing) {
  if (timing && watch.slowest_s() && (!row_.slowest_s || *watch.slowest_s() >= *row_.slowest_s)) {
    row_.slowest_s = watch.slowest_s();
    row_.per_node_s.clear();
    for (const auto& [node, s] : watch.reached_s()) row_.per_node_s["n" + std::to_string(node + 1)] = s;
  }
  row_.false_verdicts += watch.false_verdicts();
  expect(watch.false_verdicts() == 0, "no false verdict (" + watch.false_text() + ")");
}

void Scenario::slowest(std::optional<double> s) {
  if (s && (!row_.slowest_s || *s > *row_.slowest_s)) row_.slowest_s = s;
}

Fleet& fleet() {
  auto& fleet = the_fleet();
  if (!fleet) {
    char pattern[] = "/tmp/meshnode-e2e-XXXXXX";
    if (::mkdtemp(pattern) == nullptr) throw std::runtime_error("mkdtemp failed");
    work_dir() = pattern;
    std::cout << "e2e: fleet of 9 in " << work_dir() << " (logs there)" << std::endl;
    fleet = std::make_unique<Fleet>(9, e2e_parameters(), work_dir());
    fleet->start_all();
    for (std::uint32_t i : fleet->members()) {
      if (!fleet->api_up(i, std::chrono::seconds(20))) {
        throw std::runtime_error("the API of " + fleet->id(i) + " did not come up; see " + fleet->log_path(i));
      }
    }
  }
  return *fleet;
}

void end_suite() {
  the_fleet().reset();
  bool all_passed = true;
  for (const Row& row : rows()) all_passed = all_passed && row.passed;
  if (!work_dir().empty()) {
    if (all_passed) {
      std::error_code ignored;
      std::filesystem::remove_all(work_dir(), ignored);
    } else {
      std::cout << "e2e: logs kept in " << work_dir() << std::endl;
    }
  }
}

void print_summary(const std::string& json_path) {
  Json json = Json::array();
  std::printf("\n%-36s | %-7s | %-8s | %-5s | %s\n", "scenario", "result", "slowest", "false",
              "expected / seen");
  std::printf("%s\n", std::string(110, '-').c_str());
  for (const Row& row : rows()) {
    std::printf("%-36s | %-7s | %-8s | %-5zu | %s\n", row.scenario.c_str(), row.passed ? "pass" : "FAIL",
                seconds_text(row.slowest_s).c_str(), row.false_verdicts, row.expected.c_str());
    std::printf("%-36s | %-7s | %-8s | %-5s |   seen: %s\n", "", "", "", "", row.seen.c_str());
    json.push_back({{"scenario", row.scenario},
                    {"expected", row.expected},
                    {"seen", row.seen},
                    {"slowest_node_s", row.slowest_s ? Json(*row.slowest_s) : Json(nullptr)},
                    {"per_node_s", row.per_node_s},
                    {"false_verdicts", row.false_verdicts},
                    {"passed", row.passed}});
  }
  std::ofstream(json_path, std::ios::trunc) << json.dump(2) << "\n";
  std::printf("\ne2e: summary written to %s\n", json_path.c_str());
}

}  // namespace mesh::test::e2e
