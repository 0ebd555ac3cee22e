// meshnode: the daemon that runs on every VPN server (README, "The daemon").
//   meshnode --config /etc/meshnode/meshnode.toml [--log-format json]
//   meshnode --check-config FILE [--print]
//   meshnode --version
// Exit codes: node/daemon.h.
#include <CLI/CLI.hpp>

#include <sodium.h>

#include <iostream>

#include "node/config.h"
#include "node/daemon.h"
#include "node/preflight.h"

#ifndef MESHNODE_VERSION
#define MESHNODE_VERSION "unknown"
#endif

namespace {

// The pre-flight (node/preflight.h): every check a start makes, one line
// each, then a summary; exit 0 when none failed (warnings allowed), else 2.
int check_config(const std::string& path, bool print) {
  using mesh::node::CheckOutcome;
  auto config = mesh::node::load_node_config(path);
  if (!config) {
    std::cerr << "meshnode: " << config.message() << "\n";
    return mesh::node::kExitUsage;
  }
  if (sodium_init() < 0) {
    std::cerr << "meshnode: libsodium failed to initialise\n";
    return mesh::node::kExitFailure;
  }
  std::cout << "ok    config: '" << path << "' parses (node_id " << config->node_id << ")\n";
  int failed = 0, warned = 0;
  for (const auto& line : mesh::node::preflight(config.value())) {
    std::cout << mesh::node::format_check(line) << "\n";
    failed += line.outcome == CheckOutcome::fail;
    warned += line.outcome == CheckOutcome::warn;
  }
  if (print) std::cout << "\n" << mesh::node::describe_config(config.value()) << "\n";
  if (failed > 0) {
    std::cout << "not ready: " << failed << " check" << (failed == 1 ? "" : "s") << " failed\n";
    return mesh::node::kExitUsage;
  }
  std::cout << "ok: '" << path << "' is ready to start" << (warned > 0 ? " (see the warnings)" : "") << "\n";
  return mesh::node::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"meshnode: watches a VPN fleet from inside it (probes, self-checks, gossip, verdicts)"};
  std::string config_path;
  std::string check_path;
  std::string log_format;
  bool print = false;
  bool version = false;
  auto* config = app.add_option("--config", config_path, "The config file (docs/CONFIG.md)");
  auto* check = app.add_option("--check-config", check_path,
                               "Check a config and everything a start would load (key, roster, ports, tokens, "
                               "data dir), one line each; exit 0 ready, 2 not");
  app.add_flag("--print", print, "With --check-config: print the effective config, defaults filled in");
  app.add_option("--log-format", log_format, "text or json (overrides [log] format)")
      ->check(CLI::IsMember({"text", "json"}));
  app.add_flag("--version", version, "Print the version and exit");
  config->excludes(check);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return mesh::node::kExitUsage;
  }
  if (version) {
    std::cout << "meshnode " << MESHNODE_VERSION << "\n";
    return mesh::node::kExitOk;
  }
  if (!check_path.empty()) return check_config(check_path, print);
  if (config_path.empty()) {
    std::cerr << "meshnode: --config FILE is required (or --check-config FILE, --version)\n";
    return mesh::node::kExitUsage;
  }
  auto loaded = mesh::node::load_node_config(config_path);
  if (!loaded) {
    std::cerr << "meshnode: " << loaded.message() << "\n";
    return mesh::node::kExitUsage;
  }
  if (!log_format.empty()) {
    loaded->log.format = log_format == "json" ? mesh::node::LogFormat::json : mesh::node::LogFormat::text;
  }
  return mesh::node::run_daemon(loaded.value(), config_path);
}
