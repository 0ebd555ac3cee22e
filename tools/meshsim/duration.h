// Durations as scenario files and the command line write them: "90s",
// "10m", "1h", "1h30m", "500ms", "2d". Parsed to milliseconds.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/time.h"

namespace mesh::sim {

inline constexpr DurationMs kDurationMsMax = 365LL * 24 * 3'600'000;  // one year

// Parses a sequence of <digits><unit> groups (units ms, s, m, h, d), at
// least one group, total within [0, kDurationMsMax]. A bare "0" is 0.
// nullopt on anything else (empty, unknown unit, overflow).
std::optional<DurationMs> parse_duration(std::string_view text);

// The shortest exact form: "1h30m", "90s" -> "1m30s", "250ms", "0s".
std::string format_duration(DurationMs ms);

}  // namespace mesh::sim
