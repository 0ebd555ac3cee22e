// meshsim: runs a built-in scenario or a scenario file on the simulator
// and prints the result (docs/SIMULATOR.md). Exit status: 0 every
// expectation held, 1 one failed, 2 bad usage or a bad scenario.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>

#include "tools/meshsim/builtin.h"
#include "tools/meshsim/duration.h"
#include "tools/meshsim/output.h"
#include "tools/meshsim/scenario_file.h"
#include "tools/meshsim/simulator.h"

namespace {

constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;

std::string command_line(int argc, char** argv) {
  std::string out;
  for (int i = 0; i < argc; ++i) out += (i == 0 ? "" : " ") + std::string(argv[i]);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"meshsim: the deterministic meshnode simulator"};
  std::string scenario_name, scenario_file, duration_text, check_nodes_text;
  std::uint32_t nodes = 0, countries = 0;
  std::uint64_t seed = 1;
  std::size_t snapshot_nodes = SIZE_MAX;
  bool json = false, timing = false, list = false;
  auto* name_opt = app.add_option("--scenario", scenario_name, "Built-in scenario name");
  auto* file_opt = app.add_option("--scenario-file", scenario_file, "Scenario TOML file");
  name_opt->excludes(file_opt);
  app.add_option("--nodes", nodes, "Fleet size (built-ins)");
  app.add_option("--countries", countries, "Countries in the fleet (built-ins)");
  auto* seed_opt = app.add_option("--seed", seed, "Run seed (overrides the file's)");
  app.add_option("--duration", duration_text, "Simulated length, e.g. 1h (overrides)");
  app.add_option("--snapshot-nodes", snapshot_nodes, "Nodes listed per snapshot (all are compared)");
  app.add_option("--check-nodes", check_nodes_text, "Nodes whose verdicts are evaluated: a count or 'all'");
  app.add_flag("--json", json, "Print JSON (deterministic unless --timing)");
  app.add_flag("--timing", timing, "Include the wall-clock run time");
  app.add_flag("--list", list, "List the built-in scenarios");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : kExitUsage;
  }
  if (list) {
    for (const std::string& name : mesh::sim::builtin_names()) std::cout << name << "\n";
    return 0;
  }
  std::optional<mesh::DurationMs> duration;
  if (!duration_text.empty()) {
    duration = mesh::sim::parse_duration(duration_text);
    if (!duration || *duration <= 0) {
      std::cerr << "meshsim: bad --duration '" << duration_text << "'\n";
      return kExitUsage;
    }
  }
  mesh::sim::ScenarioResult<mesh::sim::Scenario> scenario =
      scenario_file.empty()
          ? mesh::sim::builtin_scenario(scenario_name.empty() ? "country-block" : scenario_name,
                                        {nodes, countries, seed, duration})
          : mesh::sim::load_scenario_file(scenario_file);
  if (!scenario.ok()) {
    std::cerr << "meshsim: " << scenario.message() << "\n";
    return kExitUsage;
  }
  if (!scenario_file.empty()) {
    if (*seed_opt) scenario->seed = seed;
    if (duration) scenario->duration_ms = *duration;
  }
  if (check_nodes_text == "all") {
    scenario->sim.check_nodes = mesh::sim::kNodesMax;
  } else if (!check_nodes_text.empty()) {
    scenario->sim.check_nodes = static_cast<std::uint32_t>(std::stoul(check_nodes_text));
  }
  mesh::sim::RunOptions options{snapshot_nodes, command_line(argc, argv) + (*seed_opt ? "" : " --seed " + std::to_string(scenario->seed))};
  auto result = mesh::sim::run_scenario(scenario.value(), options);
  if (!result.ok()) {
    std::cerr << "meshsim: " << result.message() << "\n";
    return kExitUsage;
  }
  std::cout << (json ? mesh::sim::to_json(result.value(), timing)
                     : mesh::sim::to_summary(result.value(), timing));
  if (!result->passed) {
    std::cerr << "meshsim: expectations failed; seed " << result->seed << "; reproduce with: "
              << result->command << "\n";
    return kExitFailed;
  }
  return 0;
}
