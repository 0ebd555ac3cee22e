// `meshnode-standin service`: a stand-in for a VPN server's service process,
// for the `process:NAME` self-check (docs/CONFIG.md, "[self_check]").
#pragma once

#include <cstddef>
#include <string>

namespace mesh::standin {

// The kernel keeps 15 bytes of a process name (/proc/PID/comm).
inline constexpr std::size_t kProcessNameBytesMax = 15;

struct ServiceOptions {
  std::string name;      // 1..kProcessNameBytesMax bytes, no '/' or control characters
  std::string pid_file;  // "" = none; written at start, removed at exit
};

// Renames this process to `name` (prctl PR_SET_NAME), writes the pid file,
// and waits for SIGTERM or SIGINT. Returns the exit code: 0 after a
// signal, 2 for a bad name or a pid file it cannot write (message on stderr).
int run_service(const ServiceOptions& options);

}  // namespace mesh::standin
