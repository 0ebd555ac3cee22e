#include "node/service_check.h"

#include <string>
#include <vector>

#include "node/child_process.h"
#include "node/process_scan.h"
#include "node/reason_text.h"

namespace mesh::node {
namespace {

// The spec's argument as quoted in a reason; the whole reason is cut to
// kSelfCheckReasonBytesMax by the self-checker.
constexpr std::size_t kReasonArgumentBytesMax = 48;
constexpr std::string_view kSchemeHelp = "expected systemd:UNIT, process:NAME or exec:COMMAND";

struct Scheme {
  std::string_view prefix;
  ServiceKind kind;
};
constexpr Scheme kSchemes[] = {
    {"systemd:", ServiceKind::systemd},
    {"process:", ServiceKind::process},
    {"exec:", ServiceKind::exec},
};

Error<ServiceSpecError> spec_error(ServiceSpecError code, std::string_view text,
                                   std::string_view what) {
  return make_error(code, "service \"" + truncate_utf8(text, kReasonArgumentBytesMax) +
                              "\": " + std::string(what));
}

bool has_bad_character(ServiceKind kind, std::string_view argument) {
  if (argument.find_first_of(std::string_view("\0\n\r", 3)) != std::string_view::npos) return true;
  return kind != ServiceKind::exec && argument.find_first_of(" \t/") != std::string_view::npos;
}

std::string describe_ending(const ChildResult& child, DurationMs timeout_ms) {
  switch (child.ending) {
    case ChildResult::Ending::exited:
      return "exit " + std::to_string(child.exit_code);
    case ChildResult::Ending::signaled:
      return "killed by signal " + std::to_string(child.signal);
    case ChildResult::Ending::timed_out:
      return "timed out after " + std::to_string(timeout_ms) + " ms";
    case ChildResult::Ending::spawn_failed:
      return "cannot run: " + child.error;
  }
  return "unknown ending";
}

ServiceStatus failed(const ServiceSpec& spec, const std::string& why) {
  return ServiceStatus{false, "service " + truncate_utf8(to_string(spec), kReasonArgumentBytesMax) +
                                  ": " + why};
}

ServiceStatus judge_child(const ServiceSpec& spec, const ChildResult& child,
                          DurationMs timeout_ms) {
  if (child.ending == ChildResult::Ending::exited && child.exit_code == 0) return {};
  const bool systemd_said_no =
      spec.kind == ServiceKind::systemd && child.ending == ChildResult::Ending::exited;
  return failed(spec, systemd_said_no ? "inactive" : describe_ending(child, timeout_ms));
}

}  // namespace

Result<ServiceSpec, ServiceSpecError> parse_service_spec(std::string_view text) {
  if (text.empty()) return ServiceSpec{};
  if (text.size() > kServiceSpecBytesMax) {
    return spec_error(ServiceSpecError::too_long, text,
                      "longer than " + std::to_string(kServiceSpecBytesMax) + " bytes");
  }
  for (const Scheme& scheme : kSchemes) {
    if (!text.starts_with(scheme.prefix)) continue;
    const std::string_view argument = text.substr(scheme.prefix.size());
    if (argument.find_first_not_of(" \t") == std::string_view::npos) {
      return spec_error(ServiceSpecError::empty_argument, text, "nothing after the scheme");
    }
    if (has_bad_character(scheme.kind, argument)) {
      return spec_error(ServiceSpecError::bad_character, text,
                        "a NUL or line break, or (systemd, process) a space or '/'");
    }
    return ServiceSpec{scheme.kind, std::string(argument)};
  }
  return spec_error(ServiceSpecError::unknown_scheme, text,
                    "unknown scheme (" + std::string(kSchemeHelp) + ")");
}

std::string to_string(const ServiceSpec& spec) {
  for (const Scheme& scheme : kSchemes) {
    if (scheme.kind == spec.kind) return std::string(scheme.prefix) + spec.argument;
  }
  return {};
}

ServiceStatus check_service(const ServiceSpec& spec, DurationMs timeout_ms,
                            const std::string& proc_root, const std::atomic<bool>* cancel) {
  switch (spec.kind) {
    case ServiceKind::none:
      return {};
    case ServiceKind::systemd:
      return judge_child(
          spec, run_child({"systemctl", "is-active", "--quiet", "--", spec.argument}, timeout_ms, cancel),
          timeout_ms);
    case ServiceKind::process:
      return process_running(spec.argument, proc_root) ? ServiceStatus{}
                                                        : failed(spec, "not running");
    case ServiceKind::exec:
      return judge_child(spec, run_child({"/bin/sh", "-c", spec.argument}, timeout_ms, cancel),
                         timeout_ms);
  }
  return {};
}

}  // namespace mesh::node
