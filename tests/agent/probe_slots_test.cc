// Probe slots (node/agent/probe_schedule.h; docs/PROTOCOL.md, "Probes"): a
// country's witnesses of a target probe it evenly spread over the interval.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <vector>

#include "node/agent/probe_schedule.h"
#include "tests/agent/fleet.h"

namespace mesh::agent::testing {
namespace {

TEST_CASE("a slot is the first point of the grid at or after the time asked") {
  const std::uint32_t quarter = 1u << 30;  // a quarter of the interval
  CHECK(next_slot_ms(0, 60'000, 0) == 0);
  CHECK(next_slot_ms(1, 60'000, 0) == 60'000);
  CHECK(next_slot_ms(0, 60'000, quarter) == 15'000);
  CHECK(next_slot_ms(15'000, 60'000, quarter) == 15'000);
  CHECK(next_slot_ms(15'001, 60'000, quarter) == 75'000);
  CHECK(next_slot_ms(-1, 60'000, quarter) == 15'000);
  CHECK(next_slot_ms(-45'001, 60'000, quarter) == -45'000);
  CHECK(next_slot_ms(1'700'000'000'001, 10'000, 0) == 1'700'000'010'000);
}

TEST_CASE("the phases of a target's witnesses: a country's rank / turns apart, the countries' interleaved between them") {
  const CountryPlace us{4, 5};  // the last of five countries
  const std::uint32_t a0 = probe_phase("de-1", us, TlsTurn{0, 3});
  const std::uint32_t a1 = probe_phase("de-1", us, TlsTurn{1, 3});
  const std::uint32_t a2 = probe_phase("de-1", us, TlsTurn{2, 3});
  const std::uint64_t whole = std::uint64_t{1} << 32;
  CHECK(static_cast<std::uint32_t>(a1 - a0) == static_cast<std::uint32_t>(whole * 9 / 15 - whole * 4 / 15));
  CHECK(static_cast<std::uint32_t>(a2 - a0) == static_cast<std::uint32_t>(whole * 14 / 15 - whole * 4 / 15));
  CHECK(probe_phase("de-2", us, TlsTurn{0, 3}) != a0);
  // Fifteen witnesses in five countries, three each: fifteen slots a
  // fifteenth of the interval apart (a powered-off server is probed within
  // 4 s of 60 by one of them), whatever the target.
  for (const char* target : {"de-1", "nl-7", "a-much-longer-server-id"}) {
    CAPTURE(target);
    std::vector<std::uint32_t> offsets;
    const std::uint32_t base = probe_phase(target, CountryPlace{0, 5}, TlsTurn{0, 3});
    for (std::uint32_t c = 0; c < 5; ++c) {
      for (std::uint32_t rank = 0; rank < 3; ++rank) {
        offsets.push_back(probe_phase(target, CountryPlace{c, 5}, TlsTurn{rank, 3}) - base);
      }
    }
    std::sort(offsets.begin(), offsets.end());
    for (std::size_t k = 0; k < offsets.size(); ++k) {
      CHECK(offsets[k] == static_cast<std::uint32_t>(whole * k / 15));
    }
  }
  // The same inputs, the same phase, on every node.
  CHECK(probe_phase("de-1", us, TlsTurn{1, 3}) == a1);
}

TEST_CASE("a country's place: its index among the roster's sorted codes, and their number") {
  Roster roster = small_roster(6);
  const char* codes[] = {"US", "DE", "NL", "DE", "US", "FI"};
  for (std::size_t i = 0; i < 6; ++i) roster.servers[i].country = codes[i];
  CHECK(country_place(roster, "DE") == CountryPlace{0, 4});
  CHECK(country_place(roster, "FI") == CountryPlace{1, 4});
  CHECK(country_place(roster, "NL") == CountryPlace{2, 4});
  CHECK(country_place(roster, "US") == CountryPlace{3, 4});
  CHECK(country_place(roster, "RU") == CountryPlace{0, 1});  // not in the roster
}

TEST_CASE("a country's witnesses of a target probe it evenly spread over the interval") {
  // Six servers in one country; each target has three witnesses (the
  // roster's witnesses_per_country), whose probes of it fall a third of the
  // 10 s interval apart, 1 s off at most (the test fleet's tick).
  Fleet fleet(6, small_roster(6));
  std::map<std::string, std::vector<UnixMs>> probes;  // target -> request times
  fleet.probe_outcome = [&](std::uint32_t, const ProbeRequest& request) {
    probes[request.target].push_back(fleet.now);
    return ProbeFailure::none;
  };
  fleet.run_for(60'000);
  probes.clear();
  const UnixMs from = fleet.now;
  fleet.run_for(10'000);
  REQUIRE(probes.size() == 6);
  for (auto& [target, times] : probes) {
    CAPTURE(target);
    REQUIRE(times.size() == 3);
    std::vector<UnixMs> offsets;
    for (UnixMs t : times) offsets.push_back((t - from) % 10'000);
    std::sort(offsets.begin(), offsets.end());
    offsets.push_back(offsets.front() + 10'000);  // the gap round the end
    for (std::size_t k = 1; k < offsets.size(); ++k) {
      CHECK(offsets[k] - offsets[k - 1] >= 2'300);
      CHECK(offsets[k] - offsets[k - 1] <= 4'400);
    }
  }
}

}  // namespace
}  // namespace mesh::agent::testing
