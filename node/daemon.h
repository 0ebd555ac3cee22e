// The meshnode daemon: the thin Boost.Asio shell that drives one node agent
// (node/agent/agent.h) with real sockets, clocks, probes, self-checks and
// LMDB. One io_context on one thread; one strand owns the agent; a
// steady_timer drives its ticks; the prober, the transport and the
// self-checker post their results back to that strand. Nothing blocking
// runs on it: self-checks and /proc reads run on the self-checker's worker.
#pragma once

#include <string>

#include "node/config.h"

namespace mesh::node {

// Exit codes of `meshnode`.
inline constexpr int kExitOk = 0;        // stopped by SIGTERM/SIGINT, state flushed
inline constexpr int kExitFailure = 1;   // could not start (key, data dir, address) or storage failed
// Bad arguments or config, or the operator's files disagree: no roster to
// start from, or a roster without this node or with another key for it.
inline constexpr int kExitUsage = 2;

// Runs the daemon until SIGTERM or SIGINT; returns an exit code. Errors at
// start-up are printed (and logged) with what to fix. `config_path` is
// re-read on SIGHUP for the log level; the roster file is re-read then too.
int run_daemon(const NodeConfig& config, const std::string& config_path);

}  // namespace mesh::node
