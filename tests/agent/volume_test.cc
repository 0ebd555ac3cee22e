// The daily volume cap (node/agent/volume.h): the account never passes the
// cap, probes slow down to last the day, the stored reservation is an upper
// bound, and a new UTC day starts afresh.
#include <doctest/doctest.h>

#include "node/agent/volume.h"
#include "tests/agent/fleet.h"

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
