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
#include "tests/record/mutations.h"
#include "tests/record/random_report.h"

using namespace mesh;

namespace {

constexpr std::uint32_t kSeed = 777;
constexpr int kRounds = 20000;  // envelope mutations
constexpr UnixMs kNow = 1'700'000'000'000;

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
bool expect_same_report(const Bytes& payload, const Roster& roster, std::uint32_t origin, UnixMs timestamp = kNow) {
  CAPTURE(to_hex(payload));
  auto fresh = decode_report_payload(payload, roster, origin, timestamp);
  auto legacy = legacy::decode_report_payload_msgpack_c(payload, roster, origin, timestamp);
  REQUIRE(fresh.ok() == legacy.ok());
  if (!fresh.ok()) {
    CHECK_MESSAGE(fresh.code() == legacy.code(), fresh.message() << " / " << legacy.message());
    return false;
  }
  CHECK(*fresh == *legacy);
  return true;
}

}  // namespace

TEST_CASE("valid records and reports decode identically") {
  KeyPair key = test::test_key(5);
  Roster roster = test::sample_roster(40, 3);
  for (std::uint32_t servers : {2u, 10u, 40u}) {
    Bytes payload = encode_report_payload(test::sample_report(servers, 3, kNow), kNow);
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
  Bytes payload = encode_report_payload(test::sample_report(12, 3, kNow), kNow);
  Bytes report_record =
      encode_signed_record(RecordKind::report, "de-fra-1", 9, kNow, payload, key.secret_key);
  Bytes roster_record = encode_signed_record(RecordKind::roster, kOperatorOrigin, 2, kNow,
                                             Bytes{0x93, 0x90, 0x90, 0x90}, key.secret_key);
  for (int round = 0; round < kRounds; ++round) {
    CAPTURE(round);
    expect_same_envelope(test::mutate_msgpack(round % 4 == 0 ? roster_record : report_record, rng));
  }
}

// Random reports with faults of every rule, their target sets written as
// bitmaps or as gaps (with a gap of 0 or one beyond any roster now and
// then): tests/record/random_report.cc.
TEST_CASE("random reports in either target-set form give the same result and error code") {
  std::vector<Roster> rosters;
  for (std::size_t servers : {3, 12, 100, 1000}) rosters.push_back(test::sample_roster(servers, 7));
  std::mt19937 rng(kSeed);
  int accepted = 0;
  for (int i = 0; i < 8000; ++i) {
    const Roster& roster = rosters[static_cast<std::size_t>(i) % rosters.size()];
    test::RandomReport report = test::random_report_payload(roster, rng);
    CAPTURE(i);
    CAPTURE(report.faults);
    if (expect_same_report(report.payload, roster, report.origin_index, report.record_timestamp_ms)) ++accepted;
  }
  MESSAGE("random reports accepted by both: " << accepted << " of 8000");
}

// The corpus lives in mutations.cc: validate_test.cc replays it.
TEST_CASE("mutated report payloads give the same result and error code") {
  int accepted = 0;
  test::for_each_typed_report_mutation([&](int round, const test::ReportInput& input) {
    CAPTURE(round);
    REQUIRE(input.record_timestamp_ms == kNow);
    if (expect_same_report(input.payload, input.roster, input.origin_index)) ++accepted;
  });
  MESSAGE("mutated payloads accepted by both: " << accepted << " of 20000");
}
