// Runs a short-lived child process with a deadline, for the service checks
// (node/service_check.h). Blocking: call it from a worker thread only.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "common/time.h"

namespace mesh::node {

struct ChildResult {
  enum class Ending {
    exited,        // exit_code is set
    signaled,      // killed by `signal` (not by us)
    timed_out,     // still running at the deadline: its process group was killed
    spawn_failed,  // could not start; `error` says why
  };
  Ending ending = Ending::spawn_failed;
  int exit_code = -1;
  int signal = 0;
  std::string error;
};

// Runs argv (argv[0] is looked up in PATH when it has no '/') with stdin,
// stdout and stderr on /dev/null, every other descriptor closed, default
// signal dispositions and an empty signal mask, in a process group of its
// own. Waits up to timeout_ms; then SIGKILLs the whole group (a shell and
// what it started) and reaps the child. Thread-safe (posix_spawn).
// `cancel`, when given, is polled while waiting: once it reads true the
// group is killed at once, as at the deadline (a daemon shutting down).
// REQUIRES: !argv.empty(); SIGCHLD is not ignored in this process (else the
// child cannot be reaped and the result reads as spawn_failed).
ChildResult run_child(const std::vector<std::string>& argv, DurationMs timeout_ms,
                      const std::atomic<bool>* cancel = nullptr);

}  // namespace mesh::node
