// ClockWatch: a node whose clock runs ahead sees the fleet's reports arrive
// already old; one that runs behind sees them refused as future-dated. Both
// need several origins inside the last two report intervals.
#include <doctest/doctest.h>

#include "node/agent/clock_watch.h"

namespace mesh::agent {
namespace {

constexpr UnixMs kNow = 1'767'225'600'000;

// 60 s heartbeats, stale after 180 s, skew 30 s (the arithmetic below is in them).
Parameters params() {
  Parameters params;
  params.heartbeat_interval_ms = 60'000;
  params.stale_after_ms = 180'000;
  return params;
}

}  // namespace

TEST_CASE("reports arriving seconds old: the clock agrees") {
  ClockWatch watch;
  for (std::uint32_t origin = 0; origin < 10; ++origin) {
    watch.on_arrival(origin, kNow - 2'000 - origin * 100, kNow);
  }
  CHECK(watch.state(kNow, params()) == ClockState{});
}

TEST_CASE("reports arriving ten minutes old from several origins: ahead, by the youngest") {
  ClockWatch watch;
  const DurationMs skew = 600'000;
  watch.on_arrival(1, kNow - skew - 1'000, kNow - 30'000);
  watch.on_arrival(2, kNow - skew - 3'000, kNow - 20'000);
  CHECK(watch.state(kNow, params()) == ClockState{});  // two origins are not enough
  watch.on_arrival(3, kNow - skew - 2'000, kNow - 10'000);
  const ClockState state = watch.state(kNow, params());
  CHECK(state.suspect == ClockSuspect::ahead);
  CHECK(state.offset_ms == 571'000);  // ages: 571 s, 583 s, 592 s: the youngest
  // Two report intervals later, with nothing new, the evidence has aged out.
  CHECK(watch.state(kNow + 150'000, params()) == ClockState{});
}

TEST_CASE("old records SYNCed in (stopped agents) beside one fresh push do not make it ahead") {
  ClockWatch watch;
  // Most of the fleet's agents stopped long ago: their last reports arrive
  // by SYNC, minutes old. One live neighbour's push arrives fresh.
  for (std::uint32_t origin = 0; origin < 9; ++origin) watch.on_arrival(origin, kNow - 900'000, kNow);
  watch.on_arrival(9, kNow - 1'000, kNow);
  CHECK(watch.state(kNow, params()).suspect == ClockSuspect::none);
}

TEST_CASE("the latest arrival of an origin counts, not every one") {
  ClockWatch watch;
  // Origin 1 once arrived old, then fresh: with two fresh others, no suspicion.
  watch.on_arrival(1, kNow - 900'000, kNow - 50'000);
  watch.on_arrival(1, kNow - 1'000, kNow);
  watch.on_arrival(2, kNow - 900'000, kNow);
  watch.on_arrival(3, kNow - 1'000, kNow);
  CHECK(watch.state(kNow, params()).suspect == ClockSuspect::none);
}

TEST_CASE("records refused as dated in the future: behind, at least max_clock_skew_ms") {
  ClockWatch watch;
  watch.on_future_total(2, kNow - 10'000);
  CHECK(watch.state(kNow, params()) == ClockState{});
  watch.on_future_total(5, kNow);
  CHECK(watch.state(kNow, params()) == ClockState{ClockSuspect::behind, 30'000});
  // As many accepted reports as refusals: a few early records, not a clock.
  for (std::uint32_t origin = 0; origin < 6; ++origin) watch.on_arrival(origin, kNow - 1'000, kNow);
  CHECK(watch.state(kNow, params()).suspect == ClockSuspect::none);
  // A counter that went down (a new core) starts over without a false burst.
  ClockWatch fresh;
  fresh.on_future_total(100, kNow - 500'000);
  fresh.on_future_total(1, kNow);
  CHECK(fresh.state(kNow, params()).suspect == ClockSuspect::none);
}

TEST_CASE("memory stays bounded under a flood") {
  ClockWatch watch;
  for (std::uint32_t k = 0; k < 3 * ClockWatch::kArrivalsMax; ++k) {
    watch.on_arrival(k % 50, kNow - 1'000, kNow);
  }
  watch.on_future_total(10 * ClockWatch::kArrivalsMax, kNow);
  CHECK(watch.state(kNow, params()).suspect == ClockSuspect::behind);
}

}  // namespace mesh::agent
