// The daily volume cap (node/agent/volume.h): the account never passes the
// cap, probes slow down to last the day, the stored reservation is an upper
// bound, and a new UTC day starts afresh.
#include <doctest/doctest.h>

#include <algorithm>

#include "node/agent/volume.h"
#include "tests/agent/fleet.h"
#include "tests/e2e/volume_cap.h"

namespace mesh::agent::testing {
namespace {

constexpr UnixMs kMidnight = 20'000 * kDayMs;  // a UTC midnight

TEST_CASE("probes and frames are refused once the cap would be passed") {
  VolumeBudget budget;
  budget.set_cap(100'000);
  budget.roll(kMidnight);
  int probes = 0;
  while (budget.reserve_probe(kProbeReserveTlsBytes)) ++probes;
  CHECK(probes == 4);  // 4 x 24 KiB fit in 100 000 bytes, a fifth does not
  CHECK(budget.status().probes_deferred == 1);
  budget.settle_probe(kProbeReserveTlsBytes, 8'000, true);
  CHECK(budget.status().charged_bytes == 3 * kProbeReserveTlsBytes + 8'000);
  CHECK(budget.charge_frame(10'000, kMidnight));
  CHECK(!budget.charge_frame(20'000, kMidnight));
  CHECK(budget.status().frames_refused == 1);
  CHECK(budget.status().charged_bytes <= budget.cap());
}

TEST_CASE("a new UTC day starts a new account; a step back to yesterday keeps today's") {
  VolumeBudget budget;
  budget.set_cap(1'000'000);
  budget.roll(kMidnight + 1);
  CHECK(budget.charge_frame(5'000, kMidnight + 1));
  budget.roll(kMidnight - 10);  // the clock stepped back over midnight
  CHECK(budget.status().charged_bytes == 5'000);
  budget.roll(kMidnight + kDayMs);
  CHECK(budget.status().charged_bytes == 0);
  CHECK(budget.status().day == 20'001);
}

TEST_CASE("the stored reservation runs ahead of the account, so a crash never under-counts") {
  VolumeBudget budget;
  budget.set_cap(100'000'000);
  budget.roll(kMidnight);
  auto first = budget.reservation_due();
  REQUIRE(first.has_value());
  CHECK(first->charged_bytes >= kReservationChunkMinBytes);
  CHECK(!budget.reservation_due());  // nothing new until the account passes it
  for (int i = 0; i < 500; ++i) CHECK(budget.charge_frame(1'000, kMidnight + i * 1'000));
  auto second = budget.reservation_due();
  REQUIRE(second.has_value());
  CHECK(second->charged_bytes > budget.status().charged_bytes);
  VolumeBudget restarted;
  restarted.set_cap(100'000'000);
  restarted.restore(*second, kMidnight + 300'000);
  CHECK(restarted.status().charged_bytes == second->charged_bytes);
  VolumeBudget next_day;
  next_day.restore(*second, kMidnight + kDayMs);  // yesterday's account is over
  next_day.roll(kMidnight + kDayMs);
  CHECK(next_day.status().charged_bytes == 0);
}

TEST_CASE("when the cap is tight, probes slow down to last until midnight") {
  VolumeBudget budget;
  budget.set_cap(10'000'000);
  budget.roll(kMidnight);
  // 100 targets every 60 s at ~0.5 KB a probe is ~70 MB a day: far over.
  const DurationMs paced = budget.paced_interval(60'000, 100, 10, kMidnight);
  CHECK(paced > 60'000);
  CHECK(budget.status().tight);
  // What is left lasts the day: rounds * round cost within the cap.
  const double rounds = static_cast<double>(kDayMs) / static_cast<double>(paced);
  CHECK(rounds * 100 * (280.0 * 9 + 2'400) / 10 <= 10'000'000 * 1.01);
  // With room to spare the base interval stands.
  budget.set_cap(1'000'000'000);
  CHECK(budget.paced_interval(60'000, 100, 10, kMidnight) == 60'000);
  CHECK(!budget.status().tight);
}

// The end-to-end suite's shape (tests/e2e/suite.cc, fleet.cc): probes every
// 2 s, every probe TLS, and each node probing up to 8 others (9 with the
// server scenario 11 adds).
constexpr DurationMs kSuiteProbeIntervalMs = 2'000;
// What VolumeBudget reckons a TLS probe costs before it has measured one
// (docs/CONFIG.md, "Daily volume cap": about 2 KB).
constexpr std::uint64_t kTlsEstimateBytes = 2'400;

TEST_CASE("at a fixed time of day the interval is the rest of the day over the rounds that still fit") {
  // docs/CONFIG.md: the longest of the roster's interval and (rest of the
  // day) / (rounds that fit in the cap less today's account and the
  // projected gossip). Nothing spent yet, no gossip: the rounds that fit
  // are the same all day, so the pace depends on the hour alone. This is
  // what the suite's 2 s probes met under the default cap of 200 MiB.
  constexpr std::uint64_t kCap = 200ull * 1024 * 1024;
  constexpr std::size_t kTargets = 8;
  constexpr std::uint64_t kRounds = kCap / (kTargets * kTlsEstimateBytes);
  constexpr DurationMs kHourMs = 3'600'000;
  for (DurationMs time_of_day : {DurationMs{1'000}, 6 * kHourMs, 12 * kHourMs, 18 * kHourMs, 20 * kHourMs, 23 * kHourMs}) {
    CAPTURE(time_of_day);
    VolumeBudget budget;
    budget.set_cap(kCap);
    const DurationMs expected =
        std::max<DurationMs>(kSuiteProbeIntervalMs, (kDayMs - time_of_day) / static_cast<DurationMs>(kRounds));
    CHECK(budget.paced_interval(kSuiteProbeIntervalMs, kTargets, 1, kMidnight + time_of_day) == expected);
    CHECK(budget.status().tight == (expected > kSuiteProbeIntervalMs));
  }
  // So a suite that started a second after midnight UTC probed every 7.9 s,
  // one that started at noon every 4 s, and only after about 19:00 at its 2 s.
  VolumeBudget budget;
  budget.set_cap(kCap);
  CHECK(budget.paced_interval(kSuiteProbeIntervalMs, kTargets, 1, kMidnight + 1'000) == 7'910);
  CHECK(budget.paced_interval(kSuiteProbeIntervalMs, kTargets, 1, kMidnight + 12 * kHourMs) == 3'955);
  CHECK(budget.paced_interval(kSuiteProbeIntervalMs, kTargets, 1, kMidnight + 19 * kHourMs + 1'800'000) ==
        kSuiteProbeIntervalMs);
}

TEST_CASE("the end-to-end suite's cap keeps its 2 s probes at every hour of the day") {
  Parameters suite;
  suite.probe_interval_ms = kSuiteProbeIntervalMs;
  const std::uint64_t cap = test::e2e::suite_volume_cap(suite);
  constexpr std::size_t kTargets = test::e2e::kSuiteServersMax - 1;
  constexpr std::uint64_t kGossipPerMinute = 1'000'000;  // a generous 1.4 GB a day
  for (DurationMs time_of_day : {DurationMs{1'000}, DurationMs{3'600'000}, DurationMs{43'200'000},
                                 DurationMs{79'200'000}, kDayMs - 60'000}) {
    CAPTURE(time_of_day);
    VolumeBudget budget;
    budget.set_cap(cap);
    budget.roll(kMidnight);
    // The day so far at the suite's pace, every probe at its worst-case
    // cost (which also makes the budget's estimate of a probe the worst).
    bool all_fit = true;
    for (DurationMs at = 0; at < time_of_day; at += kSuiteProbeIntervalMs) {
      for (std::size_t target = 0; target < kTargets; ++target) {
        all_fit = all_fit && budget.reserve_probe(kProbeReserveTlsBytes);
        budget.settle_probe(kProbeReserveTlsBytes, kProbeReserveTlsBytes, true);
      }
    }
    for (DurationMs at = 0; at < time_of_day; at += 60'000) {
      all_fit = all_fit && budget.charge_frame(kGossipPerMinute, kMidnight + at);
    }
    CHECK(all_fit);
    CHECK(budget.paced_interval(kSuiteProbeIntervalMs, kTargets, 1, kMidnight + time_of_day) ==
          kSuiteProbeIntervalMs);
    CHECK(!budget.status().tight);
  }
}

TEST_CASE("an agent under a small cap never charges past it, and says it is tight") {
  Fleet fleet(4, small_roster(4));
  for (std::uint32_t i = 0; i < 4; ++i) {
    fleet.kill(i);
    fleet.nodes[i].store = MemoryStore{};
    fleet.start(i, [](AgentConfig& config) { config.volume_cap_bytes_per_day = 200'000; });
  }
  for (int minute = 0; minute < 20; ++minute) {
    fleet.run_for(60'000);
    for (std::uint32_t i = 0; i < 4; ++i) {
      const VolumeStatus volume = fleet.agent(i).volume();
      CHECK(volume.charged_bytes <= volume.cap_bytes);
      CHECK(volume.cap_bytes == 200'000);
    }
  }
  const VolumeStatus volume = fleet.agent(0).volume();
  CHECK(volume.tight);
  CHECK(volume.probe_interval_ms > 10'000);
}

}  // namespace
}  // namespace mesh::agent::testing
