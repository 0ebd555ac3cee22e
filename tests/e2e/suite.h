// The suite's shared fleet, made at the first scenario and kept for all of
// them (they run in order, each leaving the fleet healed), and the summary
// table each scenario adds its row to.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tests/e2e/fleet.h"
#include "tests/e2e/watch.h"

namespace mesh::test::e2e {

// One row of the summary: what the scenario expected, what the nodes
// showed, the slowest node's time to the verdict, and the false verdicts.
struct Row {
  std::string scenario;
  std::string expected;
  std::string seen;
  std::optional<double> slowest_s;
  std::map<std::string, double> per_node_s;  // when each node showed it
  std::size_t false_verdicts = 0;
  bool passed = true;
};

// A scenario in progress: checks go through expect(), which reports to
// doctest and marks the row; the row is added to the summary at the end.
class Scenario {
 public:
  Scenario(std::string name, std::string expected);
  ~Scenario();
  Scenario(const Scenario&) = delete;
  Scenario& operator=(const Scenario&) = delete;

  bool expect(bool ok, const std::string& what);
  void seen(const std::string& text) { row_.seen += (row_.seen.empty() ? "" : "; ") + text; }
  // The watch's false verdicts go into the row, and its slowest time
  // unless `timing` is false.
  void take(const Watch& watch, bool timing = true);
  void slowest(std::optional<double> s);

 private:
  Row row_;
};

Fleet& fleet();      // made and started at the first call
void end_suite();    // stops every process and removes the hosts
// The table and the JSON file (written to `json_path`).
void print_summary(const std::string& json_path);

// Roster parameters for a fleet that shows verdicts within seconds: reports
// and probes every 2 s (30x more often than the defaults), stale after 40 s
// (why: suite.cc).
Parameters e2e_parameters();

}  // namespace mesh::test::e2e
