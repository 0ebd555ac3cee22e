// Hostile input: seeded random mutations of valid records and payloads must
// give a value or an error, never a crash, and never a record that verifies
// unless it is the original.
#include <doctest/doctest.h>

#include <random>

#include "record/envelope.h"
#include "record/report.h"
#include "record/roster.h"
#include "tests/record/fixtures.h"
#include "tests/record/mutations.h"

using namespace mesh;

namespace {

constexpr std::uint32_t kSeed = 20240611;
constexpr int kRounds = 3000;

}  // namespace

TEST_CASE("mutated records never crash and never verify") {
  std::mt19937 rng(kSeed);
  KeyPair key = test::test_key(21);
  Bytes original = encode_signed_record(RecordKind::report, "de-fra-1", 9, 1'700'000'000'000,
                                        Bytes{0x93, 0x93, 0xc3, 0xc3, 0xa0}, key.secret_key);
  int decoded = 0;
  for (int round = 0; round < kRounds; ++round) {
    CAPTURE(round);
    Bytes raw = test::mutate_bytes(original, rng);
    auto envelope = decode_envelope(raw);
    if (!envelope) continue;
    ++decoded;
    if (raw != original) CHECK_FALSE(verify_envelope(*envelope, key.public_key).ok());
  }
  MESSAGE("mutated records that still decoded: " << decoded << " of " << kRounds);
}

// The corpus lives in mutations.cc: validate_test.cc replays it.
TEST_CASE("mutated roster and report payloads never crash") {
  test::for_each_payload_mutation([](int round, const Bytes& roster_payload,
                                     const test::ReportInput& input) {
    CAPTURE(round);
    auto r = decode_roster_payload(roster_payload, 2);
    if (r) CHECK(validate_roster(*r).ok());
    auto p = decode_report_payload(input.payload, input.roster, input.origin_index,
                                   input.record_timestamp_ms);
    if (p && p->view.roster_version == input.roster.version) {
      for (const ProbeResult& result : p->view.results) {
        CHECK(result.target < input.roster.servers.size());
      }
    }
  });
}
