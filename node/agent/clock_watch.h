// ClockWatch: does this node's clock disagree with the fleet's? (docs/
// VERDICTS.md, "A skewed clock"). Pure: fed with the reports the gossip core
// accepts from other origins (their timestamps and the local time they
// arrived) and the core's count of records refused as dated in the future.
//
// Reports are published and gossiped at once, so one arrives seconds after
// its timestamp. A node whose clock runs ahead sees every fresh report
// arrive already old (and soon stale); a node whose clock runs behind
// refuses the fleet's reports as dated in the future. Over the last two
// report intervals:
//   ahead:  reports from at least kOriginsMin distinct origins arrived, and
//           even the youngest on arrival (the latest per origin) was older
//           than stale_after_ms / 2; the offset is that youngest age (a
//           report SYNCed in late may be old; a fresh push never is, unless
//           this clock is ahead);
//   behind: at least kOriginsMin records were refused as future-dated and
//           fewer reports than that were accepted; the offset is at least
//           max_clock_skew_ms (the refused records' dates are not kept).
#pragma once

#include <cstdint>
#include <deque>

#include "common/time.h"
#include "record/roster.h"

namespace mesh::agent {

enum class ClockSuspect : std::uint8_t { none, ahead, behind };
const char* to_string(ClockSuspect suspect);  // "none", "ahead", "behind"

struct ClockState {
  ClockSuspect suspect = ClockSuspect::none;
  // ahead: how far (the youngest arrival age); behind: at least this far.
  DurationMs offset_ms = 0;
  bool operator==(const ClockState&) const = default;
};

class ClockWatch {
 public:
  static constexpr std::uint32_t kOriginsMin = 3;
  static constexpr std::size_t kArrivalsMax = 4096;

  // A report of another origin accepted from the network at `now`.
  void on_arrival(std::uint32_t origin, UnixMs timestamp_ms, UnixMs now);
  // The core's records_future counter (cumulative) at `now`.
  void on_future_total(std::uint64_t total, UnixMs now);

  ClockState state(UnixMs now, const Parameters& params) const;

 private:
  struct Arrival {
    UnixMs at = 0;
    std::uint32_t origin = 0;
    DurationMs age_ms = 0;
  };
  std::deque<Arrival> arrivals_;
  std::deque<UnixMs> refusals_;  // one entry per future-dated refusal
  std::uint64_t future_total_ = 0;
};

}  // namespace mesh::agent
