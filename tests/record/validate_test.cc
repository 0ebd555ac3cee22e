// Differential test: validate_report_payload gives exactly the verdict of
// decode_report_payload (ok or not, the same ReportError code and the same
// message) on the checked-in vectors, on every report payload the mutation
// and differential tests produce, and on seeded random reports, valid and
// broken in every way the decoder checks.
#include <doctest/doctest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <vector>

#include "record/envelope.h"
#include "record/report.h"
#include "record/roster.h"
#include "tests/record/fixtures.h"
#include "tests/record/mutations.h"
#include "tests/record/random_report.h"

using namespace mesh;

namespace {

constexpr std::uint32_t kRandomSeed = 4242;
constexpr int kRandomReports = 6000;

// Returns whether both accepted; checks that they agree.
bool expect_same_verdict(ByteView payload, const Roster& roster, std::uint32_t origin,
                         UnixMs timestamp_ms) {
  auto decoded = decode_report_payload(payload, roster, origin, timestamp_ms);
  auto validated = validate_report_payload(payload, roster, origin, timestamp_ms);
  if (decoded.ok() != validated.ok()) {
    FAIL_CHECK("decode " << (decoded.ok() ? "accepts" : decoded.message()) << ", validate "
                         << (validated.ok() ? "accepts" : validated.message()) << "; payload "
                         << to_hex(payload));
    return false;
  }
  if (!decoded.ok()) {
    CHECK_MESSAGE(decoded.code() == validated.code(), to_hex(payload));
    CHECK_MESSAGE(decoded.message() == validated.message(), to_hex(payload));
  }
  return decoded.ok();
}

bool expect_same_verdict(const test::ReportInput& input) {
  return expect_same_verdict(input.payload, input.roster, input.origin_index,
                             input.record_timestamp_ms);
}

Bytes vector_bytes(const nlohmann::json& value) {
  std::optional<Bytes> bytes = from_hex(value.get<std::string>());
  REQUIRE(bytes.has_value());
  return *bytes;
}

}  // namespace

TEST_CASE("validate agrees with decode on every checked-in vector") {
  std::ifstream in(std::string(MESHNODE_SOURCE_DIR) + "/tests/vectors/records.json");
  REQUIRE(in.good());
  nlohmann::json vectors = nlohmann::json::parse(in);
  std::optional<Roster> roster;
  for (const nlohmann::json& v : vectors) {
    if (v["name"] == "roster_ok") {
      roster = decode_roster_payload(vector_bytes(v["payload"]), v["seq"].get<std::uint64_t>())
                   .value();
    }
  }
  REQUIRE(roster.has_value());
  int accepted = 0;
  int checked = 0;
  for (const nlohmann::json& v : vectors) {
    CAPTURE(v["name"].get<std::string>());
    // Every byte string of the vector is fed as a report payload: the report
    // payload itself, and the record and other payloads as hostile input.
    std::vector<Bytes> inputs{vector_bytes(v["record"])};
    if (v.contains("payload")) inputs.push_back(vector_bytes(v["payload"]));
    if (auto envelope = decode_envelope(inputs[0])) inputs.push_back(envelope->payload);
    UnixMs timestamp = v.value("timestamp_ms", std::int64_t{1'700'000'000'000});
    for (const Bytes& input : inputs) {
      for (std::uint32_t origin = 0; origin <= roster->servers.size(); ++origin) {
        if (expect_same_verdict(input, *roster, origin, timestamp)) ++accepted;
        ++checked;
      }
    }
  }
  // At least report_ok's payload, given and inside its record, as its origin.
  CHECK(accepted >= 2);
  MESSAGE("vector inputs: " << checked << ", accepted: " << accepted);
}

TEST_CASE("validate agrees with decode on the mutation test's payloads") {
  int accepted = 0;
  test::for_each_payload_mutation([&](int round, const Bytes&, const test::ReportInput& input) {
    CAPTURE(round);
    if (expect_same_verdict(input)) ++accepted;
  });
  CHECK(accepted > 0);
  MESSAGE("accepted: " << accepted << " of 3000");
}

TEST_CASE("validate agrees with decode on the differential test's payloads") {
  Roster roster = test::sample_roster(40, 3);
  constexpr UnixMs kNow = 1'700'000'000'000;
  for (std::uint32_t servers : {2u, 10u, 40u}) {
    Bytes payload = encode_report_payload(test::sample_report(servers, 3, kNow), kNow);
    CHECK(expect_same_verdict(payload, roster, 0, kNow));
  }
  int accepted = 0;
  test::for_each_typed_report_mutation([&](int round, const test::ReportInput& input) {
    CAPTURE(round);
    if (expect_same_verdict(input)) ++accepted;
  });
  CHECK(accepted > 0);
  MESSAGE("accepted: " << accepted << " of 20000");
}

TEST_CASE("validate agrees with decode on seeded random reports, valid and broken") {
  std::vector<Roster> rosters;
  for (std::size_t servers : {1, 3, 12, 100, 1000}) {
    rosters.push_back(test::sample_roster(servers, 7));
  }
  std::mt19937 rng(kRandomSeed);
  std::map<std::string, int> outcomes;  // "ok" or the error code's name
  for (int i = 0; i < kRandomReports; ++i) {
    const Roster& roster = rosters[static_cast<std::size_t>(i) % rosters.size()];
    test::RandomReport report = test::random_report_payload(roster, rng);
    CAPTURE(i);
    CAPTURE(report.faults);
    bool ok = expect_same_verdict(report.payload, roster, report.origin_index,
                                  report.record_timestamp_ms);
    auto decoded = decode_report_payload(report.payload, roster, report.origin_index,
                                         report.record_timestamp_ms);
    ++outcomes[ok ? "ok" : to_string(decoded.code())];
  }
  // The corpus reaches every verdict, and a fair share is accepted.
  for (const char* outcome : {"ok", "malformed", "oversize", "unknown_target", "self_target",
                              "repeated_target", "impossible_value"}) {
    CAPTURE(outcome);
    CHECK(outcomes[outcome] >= kRandomReports / 100);
  }
  CHECK(outcomes["ok"] >= kRandomReports / 5);
  for (const auto& [outcome, count] : outcomes) MESSAGE(outcome << ": " << count);
}
