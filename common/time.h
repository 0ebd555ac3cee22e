// Time in meshnode is a plain count of milliseconds since the Unix epoch,
// always passed in as an argument (the pure cores never read a clock).
// Names carry the unit: `now_ms`, `stale_after_ms`.
#pragma once

#include <cstdint>

namespace mesh {

using UnixMs = std::int64_t;      // a point in time, ms since 1970-01-01T00:00:00Z
using DurationMs = std::int64_t;  // a span of time in ms

}  // namespace mesh
