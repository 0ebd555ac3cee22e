// Differential test: the hand-rolled decoders (record/msgpack_reader.h) must
// give the same result and error code as the msgpack-c based decoders they
// replaced (tests/record/legacy_*.cc) on valid records and on many seeded
// mutations of them, including mutations aimed at msgpack type bytes.
#include <doctest/doctest.h>

#include <random>

#include "record/envelope.h"
#include "record/report.h"
#include "record/roster.h"
#include "tests/record/fixtures.h"
#include "tests/record/legacy_decode.h"

using namespace mesh;

namespace {

constexpr std::uint32_t kSeed = 777;
constexpr int kRounds = 20000;
constexpr UnixMs kNow = 1'700'000'000'000;

// Bytes that start msgpack values of every family, so that mutations also
// swap one type for another (maps, floats, ext, negative ints, c1).
constexpr std::uint8_t kTypeBytes[] = {0x00, 0x7f, 0x80, 0x81, 0x90, 0x93, 0x95, 0xa0, 0xa3,
                                       0xbf, 0xc0, 0xc1, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7,
                                       0xca, 0xcb, 0xcc, 0xcd, 0xce, 0xcf, 0xd0, 0xd3, 0xd4,
                                       0xd9, 0xda, 0xdb, 0xdc, 0xdd, 0xde, 0xe0, 0xff};

Bytes mutate(Bytes input, std::mt19937& rng) {
  int edits = 1 + static_cast<int>(rng() % 3);
  for (int e = 0; e < edits && !input.empty(); ++e) {
    std::size_t at = rng() % input.size();
    auto random_byte = static_cast<std::uint8_t>(rng());
    auto type_byte = kTypeBytes[rng() % std::size(kTypeBytes)];
    switch (rng() % 6) {
      case 0: input[at] ^= static_cast<std::uint8_t>(1u << (rng() % 8)); break;
      case 1: input[at] = random_byte; break;
      case 2: input[at] = type_byte; break;
      case 3: input.insert(input.begin() + static_cast<std::ptrdiff_t>(at), type_byte); break;
      case 4: input.erase(input.begin() + static_cast<std::ptrdiff_t>(at)); break;
      default: input.resize(at); break;
    }
  }
  return input;
}

void expect_same_envelope(const Bytes& raw) {
  CAPTURE(to_hex(raw));
  auto fresh = decode_envelope(raw);
  auto legacy = legacy::decode_envelope_msgpack_c(raw);
  REQUIRE(fresh.ok() == legacy.ok());
  if (!fresh.ok()) {
    CHECK(to_string(fresh.code()) == std::string(to_string(legacy.code())));
    return;
  }
  CHECK(fresh->kind == legacy->kind);
  CHECK(fresh->origin == legacy->origin);
  CHECK(fresh->seq == legacy->seq);
  CHECK(fresh->timestamp_ms == legacy->timestamp_ms);
  CHECK(fresh->payload == legacy->payload);
  CHECK(fresh->signature == legacy->signature);
  CHECK(fresh->raw == legacy->raw);
  auto view = decode_envelope_view(raw);
  REQUIRE(view.ok());
  CHECK(Bytes(view->payload.begin(), view->payload.end()) == fresh->payload);
  CHECK(view->signed_part().size() == fresh->signed_part().size());
}

// Returns whether both decoders accepted.
bool expect_same_report(const Bytes& payload, const Roster& roster, std::uint32_t origin) {
  CAPTURE(to_hex(payload));
  auto fresh = decode_report_payload(payload, roster, origin, kNow);
  auto legacy = legacy::decode_report_payload_msgpack_c(payload, roster, origin, kNow);
  REQUIRE(fresh.ok() == legacy.ok());
  if (!fresh.ok()) {
    CHECK_MESSAGE(fresh.code() == legacy.code(), fresh.message() << " / " << legacy.message());
    return false;
  }
  CHECK(*fresh == *legacy);
  return true;
}

Report sample_report(std::uint32_t servers, std::uint64_t version) {
  Report report;
  report.self_check = {false, true, "listener down"};
  report.metrics.cpu_permille = 999;
  report.metrics.memory_used_kib = 1ull << 40;
  report.metrics.load_average_milli = 70'000;
  report.view.roster_version = version;
  for (std::uint32_t t = 1; t < servers; t += 2) {
    if (t % 5 == 0) {
      report.view.results.push_back({t, t, 0, kNow - 1000, t % 3 ? kNow - 90'000 : 0,
                                     static_cast<ProbeFailure>(1 + t % 8)});
    } else {
      report.view.results.push_back({t, 0, 3 + t, kNow - 4000, kNow - 4000, ProbeFailure::none});
    }
  }
  return report;
}

}  // namespace

TEST_CASE("valid records and reports decode identically") {
  KeyPair key = test::test_key(5);
  Roster roster = test::sample_roster(40, 3);
  for (std::uint32_t servers : {2u, 10u, 40u}) {
    Bytes payload = encode_report_payload(sample_report(servers, 3), kNow);
    CHECK(expect_same_report(payload, roster, 0));
    expect_same_envelope(
        encode_signed_record(RecordKind::report, "s-000", 9, kNow, payload, key.secret_key));
  }
  expect_same_envelope(encode_signed_record(RecordKind::roster, kOperatorOrigin, 3, kNow,
                                            encode_roster_payload(roster), key.secret_key));
}

TEST_CASE("mutated records give the same result and error code") {
  std::mt19937 rng(kSeed);
  KeyPair key = test::test_key(6);
  Bytes payload = encode_report_payload(sample_report(12, 3), kNow);
  Bytes report_record =
      encode_signed_record(RecordKind::report, "de-fra-1", 9, kNow, payload, key.secret_key);
  Bytes roster_record = encode_signed_record(RecordKind::roster, kOperatorOrigin, 2, kNow,
                                             Bytes{0x93, 0x90, 0x90, 0x90}, key.secret_key);
  for (int round = 0; round < kRounds; ++round) {
    CAPTURE(round);
    expect_same_envelope(mutate(round % 4 == 0 ? roster_record : report_record, rng));
  }
}

TEST_CASE("mutated report payloads give the same result and error code") {
  std::mt19937 rng(kSeed + 1);
  Roster roster = test::sample_roster(12, 3);
  Bytes current = encode_report_payload(sample_report(12, 3), kNow);
  Bytes other_version = encode_report_payload(sample_report(40, 2), kNow);
  int accepted = 0;
  for (int round = 0; round < kRounds; ++round) {
    CAPTURE(round);
    const Bytes& original = round % 3 == 0 ? other_version : current;
    if (expect_same_report(mutate(original, rng), roster, round % 2 == 0 ? 0 : 5)) ++accepted;
  }
  MESSAGE("mutated payloads accepted by both: " << accepted << " of " << kRounds);
}
