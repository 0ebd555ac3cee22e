// record/fleet_scale.h: the heartbeat interval and stale_after a fleet of N
// servers uses (docs/CONFIG.md, "Fleet size").
#include <doctest/doctest.h>

#include <limits>

#include "record/fleet_scale.h"
#include "record/parameters.h"

using namespace mesh;

namespace {

Parameters defaults() { return Parameters{}; }

}  // namespace

TEST_CASE("fleet scale: up to 128 servers the roster's intervals hold as written") {
  for (std::size_t n : {0, 1, 2, 100, 127, 128}) {
    CHECK(effective_heartbeat_ms(defaults(), n) == 300'000);
    CHECK(effective_stale_after_ms(defaults(), n) == 720'000);
  }
}

TEST_CASE("fleet scale: above 128 servers both grow in proportion to the roster's size") {
  struct Row {
    std::size_t servers;
    DurationMs heartbeat_ms;
    DurationMs stale_after_ms;
  };
  // The table of docs/CONFIG.md, "Fleet size" (default parameters).
  const Row rows[] = {
      {129, 302'343, 725'625},        {256, 600'000, 1'440'000},
      {1000, 2'343'750, 5'625'000},   {3000, 7'031'250, 16'875'000},
      {4096, 9'600'000, 23'040'000},
  };
  for (const Row& row : rows) {
    CAPTURE(row.servers);
    CHECK(effective_heartbeat_ms(defaults(), row.servers) == row.heartbeat_ms);
    CHECK(effective_stale_after_ms(defaults(), row.servers) == row.stale_after_ms);
  }
}

TEST_CASE("fleet scale: scaled values stay within the parameters' own maxima") {
  Parameters params;
  params.heartbeat_interval_ms = 86'400'000;  // a day, the parameter's maximum
  params.stale_after_ms = 604'800'000;        // 7 days, the parameter's maximum
  REQUIRE(validate_parameters(params).ok());
  CHECK(effective_heartbeat_ms(params, 4096) == 86'400'000);
  CHECK(effective_stale_after_ms(params, 4096) == 604'800'000);

  params.heartbeat_interval_ms = 3'600'000;  // an hour: 32 h scaled, capped at a day
  params.stale_after_ms = 3'600'000;
  CHECK(effective_heartbeat_ms(params, 4096) == 86'400'000);
  CHECK(effective_stale_after_ms(params, 4096) == 115'200'000);
}

TEST_CASE("fleet scale: stale_after never falls below the heartbeat it waits for") {
  Parameters params;
  params.heartbeat_interval_ms = 86'400'000;
  params.stale_after_ms = 86'400'000;
  for (std::size_t n : {1, 128, 500, 4096}) {
    CAPTURE(n);
    CHECK(effective_stale_after_ms(params, n) >= effective_heartbeat_ms(params, n));
  }
}

TEST_CASE("fleet scale: a value that would overflow saturates instead") {
  CHECK(scale_for_fleet(std::numeric_limits<DurationMs>::max(), 4096) ==
        std::numeric_limits<DurationMs>::max());
  CHECK(scale_for_fleet(-5, 4096) == -5);
}
