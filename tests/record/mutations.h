// Seeded mutation corpora shared by the record/ tests, so that a new test can
// replay exactly the inputs an existing one checks (validate_test.cc replays
// the report payloads of mutation_test.cc and differential_test.cc).
#pragma once

#include <cstdint>
#include <functional>
#include <random>

#include "common/bytes.h"
#include "common/time.h"
#include "record/report.h"
#include "record/roster.h"

namespace mesh::test {

// Flips, overwrites, inserts or deletes one to four bytes of `input`.
Bytes mutate_bytes(Bytes input, std::mt19937& rng);

// One to three edits that also write bytes starting msgpack values of every
// family (maps, floats, ext, negative ints, c1), so that a value of one type
// becomes another, and truncations.
Bytes mutate_msgpack(Bytes input, std::mt19937& rng);

// A report payload to decode, and what to decode it against.
struct ReportInput {
  const Bytes& payload;
  const Roster& roster;
  std::uint32_t origin_index;
  UnixMs record_timestamp_ms;
};

// mutation_test.cc, "mutated roster and report payloads never crash": each
// round mutates a roster payload, then a report payload, from one generator
// (so the order is part of the corpus). `visit` gets the round, the mutated
// roster payload (to decode at version 2) and the report input.
void for_each_payload_mutation(
    const std::function<void(int round, const Bytes& roster_payload, const ReportInput&)>& visit);

// A report on `servers` servers at `version`: every odd target, every fifth
// of them failing (some never ok), with a non-empty reason.
Report sample_report(std::uint32_t servers, std::uint64_t version, UnixMs now);

// differential_test.cc, "mutated report payloads ...": 20,000 type-aware
// mutations of reports on the current roster version and on another one,
// decoded as origin 0 or 5 of a 12-server roster.
void for_each_typed_report_mutation(
    const std::function<void(int round, const ReportInput&)>& visit);

}  // namespace mesh::test
