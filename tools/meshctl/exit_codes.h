// meshctl's exit codes (README.md, "meshctl"). Scripts depend on them: never renumber.
#pragma once

#include <string>

#include "common/result.h"

namespace mesh::ctl {

inline constexpr int kExitOk = 0;           // the command did what was asked
inline constexpr int kExitCheckFailed = 1;  // a check ran and found a problem (bad signature, ...)
inline constexpr int kExitUsage = 2;        // bad arguments or unusable input (missing file, bad TOML, ...)

// Why a step of a command failed; it decides the exit code.
enum class Failure {
  check_failed,  // a check ran and failed: a signature, a certificate, no verdict yet
  unusable,      // bad arguments or input that cannot be used: a file, a URL, a token
};

inline int exit_code_of(Failure failure) {
  return failure == Failure::check_failed ? kExitCheckFailed : kExitUsage;
}

// A step's value, or the failure with a message that names what failed.
template <class T>
using CtlResult = Result<T, Failure>;

inline Error<Failure> unusable(std::string message) {
  return make_error(Failure::unusable, std::move(message));
}
inline Error<Failure> check_failed(std::string message) {
  return make_error(Failure::check_failed, std::move(message));
}

}  // namespace mesh::ctl
