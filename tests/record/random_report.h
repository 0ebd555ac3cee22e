// Seeded random report payloads for differential tests, written as raw
// msgpack (the library encoder refuses broken reports). About a third are
// valid; the others carry one or two faults aimed at the decoder's rules and
// limits: targets outside the roster, the reporter itself, repeated or
// unordered targets, a target both ok and failing, impossible streaks, times
// and reasons, a bad reason string, trailing bytes, and structural faults
// (truncation, a value of the wrong type or nested too deep, oversize
// strings, bins and arrays, a payload over its limit). Rule faults and
// structural faults are combined, so that precedence is exercised.
#pragma once

#include <cstdint>
#include <random>
#include <string>

#include "common/bytes.h"
#include "common/time.h"
#include "record/roster.h"

namespace mesh::test {

struct RandomReport {
  Bytes payload;
  std::uint32_t origin_index = 0;  // usually a roster index, sometimes beyond it
  UnixMs record_timestamp_ms = 0;
  std::string faults;              // the injected faults' names, for failure messages
};

// A random report payload against `roster` (whose version the view carries
// four times in five). Deterministic for a given generator state.
RandomReport random_report_payload(const Roster& roster, std::mt19937& rng);

}  // namespace mesh::test
