// The VPN service check of the self-check: the operator's `service` spec
// and how it is judged. Kinds:
//   ""              no service check: the service counts as running
//   "systemd:UNIT"  `systemctl is-active --quiet -- UNIT` exits 0
//   "process:NAME"  a process whose /proc/PID/comm is NAME, or whose argv[0]
//                   (/proc/PID/cmdline) is NAME or ends in "/NAME"
//   "exec:COMMAND"  `/bin/sh -c COMMAND` exits 0 within the timeout
#pragma once

#include <atomic>
#include <cstddef>
#include <string>
#include <string_view>

#include "common/result.h"
#include "common/time.h"

namespace mesh::node {

inline constexpr std::size_t kServiceSpecBytesMax = 1024;

enum class ServiceKind { none, systemd, process, exec };

struct ServiceSpec {
  ServiceKind kind = ServiceKind::none;
  std::string argument;  // the unit, the process name or the command; "" for none
  bool operator==(const ServiceSpec&) const = default;
};

enum class ServiceSpecError {
  unknown_scheme,  // not "", "systemd:", "process:" or "exec:"
  empty_argument,  // "systemd:" with nothing (or only blanks) after it, and so on
  too_long,        // over kServiceSpecBytesMax bytes
  bad_character,   // a NUL or newline, or (systemd, process) a space or '/'
};

// Parses the config's `service` value. The message names the spec and
// what is wrong, for the config loader to print.
Result<ServiceSpec, ServiceSpecError> parse_service_spec(std::string_view text);

// The spec as written in the config ("systemd:xray"; "" for none).
std::string to_string(const ServiceSpec& spec);

struct ServiceStatus {
  bool ok = true;
  std::string reason;  // set when !ok: "service systemd:xray: inactive"
};

// Runs the check. Blocking (spawns, scans /proc): call it from a worker
// thread. Commands get timeout_ms, then their process group is killed and
// the reason says "timed out after N ms". `proc_root` is "/proc" outside
// tests. Thread-safe.
// `cancel`: as run_child's (node/child_process.h).
ServiceStatus check_service(const ServiceSpec& spec, DurationMs timeout_ms,
                            const std::string& proc_root,
                            const std::atomic<bool>* cancel = nullptr);

}  // namespace mesh::node
