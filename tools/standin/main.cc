// meshnode-standin: a stand-in for a VPN server's traffic listener and its
// service process, for the demo and the integration tests (docs/CONFIG.md,
// "The stand-in VPN listener"). Exit codes: 0 after SIGTERM/SIGINT, 2 for
// a usage error or an address that cannot be bound.
#include <CLI/CLI.hpp>

#include "tools/standin/service.h"
#include "tools/standin/tls_listener.h"

namespace {

constexpr int kExitUsage = 2;

void add_listen(CLI::App& app, mesh::standin::ListenerOptions& options, std::int64_t& deadline_ms) {
  auto* cmd = app.add_subcommand(
      "listen", "A TLS server completing handshakes with any SNI; blocks clients like a censor");
  cmd->add_option("--address", options.address, "IP:port or [IPv6]:port to listen on")->required();
  cmd->add_option(
      "--block-file", options.block_file,
      "File of 'drop <ip>' / 'reset <ip>' lines, re-read when it changes and on SIGHUP");
  cmd->add_option("--deadline-ms", deadline_ms, "Per-connection deadline")
      ->check(CLI::Range(std::int64_t{100}, std::int64_t{600'000}));
}

void add_service(CLI::App& app, mesh::standin::ServiceOptions& options) {
  auto* cmd = app.add_subcommand(
      "service", "A process named NAME (/proc/PID/comm) that waits for SIGTERM or SIGINT");
  cmd->add_option("--name", options.name, "Process name, at most 15 bytes")->required();
  cmd->add_option("--pid-file", options.pid_file, "Write the pid here (removed at exit)");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"meshnode-standin: a stand-in VPN listener and service for demos and tests"};
  app.require_subcommand(1);
  mesh::standin::ListenerOptions listen;
  std::int64_t deadline_ms = listen.deadline.count();
  mesh::standin::ServiceOptions service;
  add_listen(app, listen, deadline_ms);
  add_service(app, service);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  }
  if (app.got_subcommand("service")) return mesh::standin::run_service(service);
  listen.deadline = std::chrono::milliseconds(deadline_ms);
  return mesh::standin::run_listener(listen);
}
