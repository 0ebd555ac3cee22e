// A node's own self-check flapping (docs/VERDICTS.md, "Flapping"): when its
// self-check last went from healthy to failing, and the hold-down it asks
// for when it is healthy again. BGP route flap damping (RFC 2439) with the
// penalty kept as the number of changes in the last hour: a node that
// fails once comes back at once; one that keeps failing stays out for a
// hold-down that doubles with each change, up to kFlapHoldMaxMs, and
// shrinks again as its changes leave the hour. The node publishes what
// this says in its reports (record/report.h, Flapping), so every node
// holds it out alike. Pure and small; the agent owns one.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "common/bytes.h"
#include "common/time.h"
#include "record/report.h"

namespace mesh::agent {

// Changes are counted over this window, and the longest hold-down.
inline constexpr DurationMs kFlapWindowMs = 3'600'000;
inline constexpr DurationMs kFlapHoldMaxMs = 1'800'000;
// At most this many changes are remembered (a change a minute for an hour
// is 60; more say no more).
inline constexpr std::size_t kFlapChangesKept = 64;

class FlapHistory {
 public:
  // The self-check went from healthy to failing at `now`.
  void failed(UnixMs now);
  // It is healthy again at `now`: the hold-down starts. With `base_ms`
  // (the probe interval) and n changes in the last hour, it lasts 0 for
  // n <= 1, else base_ms * 2^(n - 2), at most kFlapHoldMaxMs.
  void recovered(UnixMs now, DurationMs base_ms);
  // What a report signed at `timestamp` says (0 changes: nothing to say).
  Flapping at(UnixMs timestamp) const;

  // Storage (docs/STORAGE.md, "Agent state"): format 1 (1 B) || count (1 B)
  // || change times (8 B each, oldest first) || hold_until_ms (8 B). Decode
  // is strict: the exact length, at most kFlapChangesKept times in
  // increasing order.
  Bytes encode() const;
  static std::optional<FlapHistory> decode(ByteView bytes);

 private:
  std::vector<UnixMs> changes_;  // oldest first, at most kFlapChangesKept
  UnixMs hold_until_ms_ = 0;
};

}  // namespace mesh::agent
