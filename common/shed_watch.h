// When a server under a connection flood began to shed connections, and
// when it stopped: one log line each way, however long the flood lasts
// (the panel API's and the gossip transport's "shedding" lines). Pure:
// the caller gives the running total it shed and its clock, from one
// thread.
#pragma once

#include <cstdint>
#include <optional>

#include "common/time.h"

namespace mesh {

// Shed none for this long after shedding: the flood is over.
inline constexpr DurationMs kShedQuietMs = 60'000;

struct ShedChange {
  bool started = false;    // true: it began to shed; false: it shed none for kShedQuietMs
  std::uint64_t shed = 0;  // the running total given
};

class ShedWatch {
 public:
  // The total shed so far (monotonic) at `now`: a change to log, if any.
  std::optional<ShedChange> update(std::uint64_t shed, UnixMs now) {
    const bool more = shed > seen_;
    seen_ = shed;
    if (more) last_shed_ms_ = now;
    if (more && !shedding_) {
      shedding_ = true;
      return ShedChange{true, shed};
    }
    if (!more && shedding_ && now - last_shed_ms_ >= kShedQuietMs) {
      shedding_ = false;
      return ShedChange{false, shed};
    }
    return std::nullopt;
  }

 private:
  std::uint64_t seen_ = 0;
  bool shedding_ = false;
  UnixMs last_shed_ms_ = 0;
};

}  // namespace mesh
