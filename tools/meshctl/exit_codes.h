// meshctl's exit codes (README.md, "meshctl"). Scripts depend on them: never renumber.
#pragma once

namespace mesh::ctl {

inline constexpr int kExitOk = 0;           // the command did what was asked
inline constexpr int kExitCheckFailed = 1;  // a check ran and found a problem (bad signature, ...)
inline constexpr int kExitUsage = 2;        // bad arguments or unusable input (missing file, bad TOML, ...)

}  // namespace mesh::ctl
