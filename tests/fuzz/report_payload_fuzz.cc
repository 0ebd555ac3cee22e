// Fuzz target: the report payload (record/report.h, docs/PROTOCOL.md
// "Report payload"). Input: the payload bytes of a report record from
// de-fra-1 (index 0) of the vectors' three-server roster (version 1), signed
// at the vectors' timestamp.
//
// Properties:
// - validate_report_payload gives exactly decode_report_payload's verdict
//   (same code, same message), and allocates nothing when it accepts;
// - an accepted report keeps every documented rule: results sorted by
//   target without repeats, streaks and reasons consistent and within
//   kStreakMax, no time ahead of the record, the reason within its limit,
//   targets inside the roster and never the origin itself (same version);
// - it re-encodes to a payload that decodes to the same report, and that
//   encoding is stable;
// - decoding allocates nothing larger than its per-type limits allow.
#include <cstddef>
#include <cstdint>

#include "record/report.h"
#include "record/roster.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using namespace mesh;

constexpr std::uint32_t kOriginIndex = 0;
constexpr UnixMs kTimestampMs = fuzz::kVectorTimestampMs;
// Bitmap targets (512 bytes) plus listed failures (4096), one result each.
constexpr std::size_t kAllocationBoundBytes = (512 * 8 + 4096) * sizeof(ProbeResult) + kReportPayloadBytesMax;

void check_result(const ProbeResult& r, const Roster& roster, const Report& report) {
  if (r.fail_streak > 0) {
    FUZZ_CHECK(r.ok_streak == 0 && r.reason != ProbeFailure::none);
    FUZZ_CHECK(static_cast<std::uint8_t>(r.reason) <= kProbeFailureMax);
  } else {
    FUZZ_CHECK(r.ok_streak >= 1 && r.reason == ProbeFailure::none);
  }
  FUZZ_CHECK(r.fail_streak <= kStreakMax && r.ok_streak <= kStreakMax);
  FUZZ_CHECK(r.last_probe_ms <= kTimestampMs && r.last_ok_ms <= kTimestampMs);
  FUZZ_CHECK(r.target < kRosterServersMax);
  if (report.view.roster_version == roster.version) {
    FUZZ_CHECK(r.target < roster.servers.size() && r.target != kOriginIndex);
  }
}

void check_accepted(const Report& report, const Roster& roster) {
  FUZZ_CHECK(report.self_check.reason.size() <= kSelfCheckReasonBytesMax);
  FUZZ_CHECK(report.metrics.cpu_permille <= 1000);
  const auto& results = report.view.results;
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (i > 0) FUZZ_CHECK(results[i - 1].target < results[i].target);
    check_result(results[i], roster, report);
  }
  const Bytes encoded = encode_report_payload(report, kTimestampMs);
  FUZZ_CHECK(encoded.size() <= kReportPayloadBytesMax);
  auto again = decode_report_payload(encoded, roster, kOriginIndex, kTimestampMs);
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(*again == report);
  FUZZ_CHECK(encode_report_payload(*again, kTimestampMs) == encoded);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const Roster roster = fuzz::vector_roster();
  const ByteView payload = fuzz::view_of(data, size);
  std::size_t largest = 0;
  auto report = [&] {
    fuzz::AllocationWatch watch;
    auto result = decode_report_payload(payload, roster, kOriginIndex, kTimestampMs);
    largest = watch.largest();
    return result;
  }();
  FUZZ_CHECK(largest <= kAllocationBoundBytes);
  std::size_t validate_largest = 0;
  auto verdict = [&] {
    fuzz::AllocationWatch watch;
    auto result = validate_report_payload(payload, roster, kOriginIndex, kTimestampMs);
    validate_largest = watch.largest();
    return result;
  }();
  FUZZ_CHECK(verdict.ok() == report.ok());
  if (!report.ok()) {
    FUZZ_CHECK(verdict.code() == report.code() && verdict.message() == report.message());
    return 0;
  }
  FUZZ_CHECK(validate_largest == 0);
  check_accepted(*report, roster);
  return 0;
}
