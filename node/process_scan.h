// Finding a running process by name in /proc, for "process:NAME" service
// checks (node/service_check.h).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace mesh::node {

// /proc entries examined per scan (Linux's PID_MAX_LIMIT): a scan always ends.
inline constexpr std::size_t kProcessScanEntriesMax = 4'194'304;

// True when a process whose /proc/PID/comm is `comm` (a trailing newline
// allowed) and whose /proc/PID/cmdline is `cmdline` (NUL-separated) is
// `name`: comm equals name, or argv[0] equals name or ends in "/name".
// The kernel keeps at most 15 bytes of comm, so a longer name is found
// through argv[0] only. Pure.
bool process_matches(std::string_view name, std::string_view comm, std::string_view cmdline);

// Scans <proc_root>/*/comm and cmdline for `name`; false when none matches
// or /proc cannot be read. Blocking; thread-safe.
bool process_running(std::string_view name, const std::string& proc_root);

}  // namespace mesh::node
