// Hostile input: seeded random mutations of valid records and payloads must
// give a value or an error, never a crash, and never a record that verifies
// unless it is the original.
#include <doctest/doctest.h>

#include <random>

#include "record/envelope.h"
#include "record/report.h"
#include "record/roster.h"
#include "tests/record/fixtures.h"

using namespace mesh;

namespace {

constexpr std::uint32_t kSeed = 20240611;
constexpr int kRounds = 3000;

// Flips, overwrites, inserts or deletes a few bytes of `input`.
Bytes mutate(Bytes input, std::mt19937& rng) {
  int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits && !input.empty(); ++e) {
    std::size_t at = rng() % input.size();
    switch (rng() % 4) {
      case 0: input[at] ^= static_cast<std::uint8_t>(1u << (rng() % 8)); break;
      case 1: input[at] = static_cast<std::uint8_t>(rng()); break;
      case 2: input.insert(input.begin() + static_cast<std::ptrdiff_t>(at), static_cast<std::uint8_t>(rng())); break;
      default: input.erase(input.begin() + static_cast<std::ptrdiff_t>(at)); break;
    }
  }
  return input;
}

}  // namespace

TEST_CASE("mutated records never crash and never verify") {
  std::mt19937 rng(kSeed);
  KeyPair key = test::test_key(21);
  Bytes original = encode_signed_record(RecordKind::report, "de-fra-1", 9, 1'700'000'000'000,
                                        Bytes{0x93, 0x93, 0xc3, 0xc3, 0xa0}, key.secret_key);
  int decoded = 0;
  for (int round = 0; round < kRounds; ++round) {
    CAPTURE(round);
    Bytes raw = mutate(original, rng);
    auto envelope = decode_envelope(raw);
    if (!envelope) continue;
    ++decoded;
    if (raw != original) CHECK_FALSE(verify_envelope(*envelope, key.public_key).ok());
  }
  MESSAGE("mutated records that still decoded: " << decoded << " of " << kRounds);
}

TEST_CASE("mutated roster and report payloads never crash") {
  std::mt19937 rng(kSeed + 1);
  Roster roster = test::sample_roster(8, 2);
  Bytes roster_payload = encode_roster_payload(roster);
  Report report;
  report.view.roster_version = 2;
  report.view.results = {{1, 0, 5, 1000, 1000, ProbeFailure::none},
                         {3, 2, 0, 2000, 500, ProbeFailure::tls_alert}};
  Bytes report_payload = encode_report_payload(report, 5000);
  for (int round = 0; round < kRounds; ++round) {
    CAPTURE(round);
    auto r = decode_roster_payload(mutate(roster_payload, rng), 2);
    if (r) CHECK(validate_roster(*r).ok());
    auto p = decode_report_payload(mutate(report_payload, rng), roster, 0, 5000);
    if (p && p->view.roster_version == roster.version) {
      for (const ProbeResult& result : p->view.results) CHECK(result.target < roster.servers.size());
    }
  }
}
