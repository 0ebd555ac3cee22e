#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <functional>

#include "record/envelope.h"
#include "record/report.h"
#include "record/roster.h"
#include "tests/record/fixtures.h"
#include "tests/record/msgpack_patch.h"

using namespace mesh;
using mesh::test::contains;
using mesh::test::Packer;

namespace {

constexpr UnixMs kNow = 1'700'000'000'000;

ProbeResult ok_result(std::uint32_t target, std::uint32_t streak, UnixMs last_probe_ms) {
  return ProbeResult{target, 0, streak, last_probe_ms, last_probe_ms, ProbeFailure::none};
}

ProbeResult failing(std::uint32_t target, std::uint32_t streak, UnixMs last_probe_ms,
                    UnixMs last_ok_ms, ProbeFailure reason) {
  return ProbeResult{target, streak, 0, last_probe_ms, last_ok_ms, reason};
}

Metrics realistic_metrics() {
  Metrics m;
  m.cpu_permille = 137;
  m.memory_used_kib = 23ull * 1024 * 1024;
  m.memory_total_kib = 64ull * 1024 * 1024;   // 64 GiB in KiB
  m.disk_used_mib = 310'000;
  m.disk_total_mib = 953'674;                 // 1 TB in MiB
  m.net_rx_bytes_per_s = 12'500'000;          // ~100 Mbit/s
  m.net_tx_bytes_per_s = 12'100'000;
  m.load_average_milli = 1'420;
  m.uptime_s = 30ull * 24 * 3600;             // 30 days
  m.listener_connections = 412;
  return m;
}

// A report by server 0 of the 10-server sample roster (version 4).
Report sample_report() {
  Report report;
  report.metrics = realistic_metrics();
  report.view.roster_version = 4;
  report.view.results = {ok_result(1, 9, kNow - 5000), ok_result(2, 9, kNow - 5000),
                         failing(3, 4, kNow - 2000, kNow - 300'000, ProbeFailure::tls_reset),
                         ok_result(7, 9, kNow - 5000),
                         failing(9, 1, kNow - 1000, 0, ProbeFailure::tcp_timeout)};
  return report;
}

const Roster& roster10() {
  static const Roster roster = test::sample_roster(10, 4);
  return roster;
}

Result<Report, ReportError> decode(const Bytes& payload, std::uint32_t origin = 0) {
  return decode_report_payload(payload, roster10(), origin, kNow);
}

void expect_error(const Bytes& payload, ReportError code, const std::string& fragment,
                  std::uint32_t origin = 0) {
  auto decoded = decode(payload, origin);
  REQUIRE_FALSE(decoded.ok());
  CHECK(std::string(to_string(decoded.code())) == to_string(code));
  CHECK_MESSAGE(contains(decoded.message(), fragment), decoded.message());
}

// The sample payload with element `path` replaced.
Bytes patched(const std::vector<std::uint32_t>& path, std::function<void(Packer&)> replacement) {
  return test::patch_msgpack(encode_report_payload(sample_report(), kNow), path, replacement);
}

std::function<void(Packer&)> bin(Bytes bytes) {
  return [bytes](Packer& p) {
    p.pack_bin(static_cast<std::uint32_t>(bytes.size()));
    p.pack_bin_body(reinterpret_cast<const char*>(bytes.data()),
                    static_cast<std::uint32_t>(bytes.size()));
  };
}

std::function<void(Packer&)> uint_value(std::uint64_t value) {
  return [value](Packer& p) { p.pack_uint64(value); };
}

// One failure entry [target, streak, probe age, ok age or nil, reason].
std::function<void(Packer&)> failure_list(std::vector<std::array<std::int64_t, 5>> entries) {
  return [entries](Packer& p) {
    p.pack_array(static_cast<std::uint32_t>(entries.size()));
    for (const auto& e : entries) {
      p.pack_array(5);
      for (std::size_t i = 0; i < 5; ++i) {
        if (i == 3 && e[i] < 0) p.pack_nil(); else p.pack_int64(e[i]);
      }
    }
  };
}

}  // namespace

TEST_CASE("report round trip when ok targets share their summary") {
  Report report = sample_report();
  Bytes payload = encode_report_payload(report, kNow);
  auto decoded = decode(payload);
  REQUIRE(decoded.ok());
  CHECK(*decoded == report);
  CHECK(encode_report_payload(*decoded, kNow) == payload);
}

TEST_CASE("ok targets decode to the summary: smallest streak, oldest probe") {
  Report report = sample_report();
  report.view.results[0] = ok_result(1, 3, kNow - 9000);
  report.view.results[1] = ok_result(2, 50, kNow - 100);
  report.self_check = {false, true, "listener down"};
  auto decoded = decode(encode_report_payload(report, kNow));
  REQUIRE(decoded.ok());
  CHECK(decoded->self_check == report.self_check);
  CHECK(decoded->metrics == report.metrics);
  for (const ProbeResult& r : decoded->view.results) {
    if (r.fail_streak == 0) {
      CHECK(r.ok_streak == 3);
      CHECK(r.last_probe_ms == kNow - 9000);
      CHECK(r.last_ok_ms == kNow - 9000);
    }
  }
  CHECK(decoded->view.results[2] == report.view.results[2]);  // failures are kept in full
  CHECK(decoded->view.results[4] == report.view.results[4]);
}

TEST_CASE("encoder sorts by target, and an empty view has a zero summary") {
  Report report = sample_report();
  std::reverse(report.view.results.begin(), report.view.results.end());
  auto decoded = decode(encode_report_payload(report, kNow));
  REQUIRE(decoded.ok());
  CHECK(*decoded == sample_report());
  report.view.results.clear();
  auto empty = decode(encode_report_payload(report, kNow));
  REQUIRE(empty.ok());
  CHECK(empty->view.results.empty());
}

TEST_CASE("encoder keeps the self-check reason printable and within 120 bytes") {
  Report report = sample_report();
  report.self_check = {true, false, "bad\tbyte\xff" + std::string(200, 'x')};
  auto decoded = decode(encode_report_payload(report, kNow));
  REQUIRE(decoded.ok());
  CHECK(decoded->self_check.reason.substr(0, 10) == "bad?byte?x");
  CHECK(decoded->self_check.reason.size() == 120);
  report.self_check.reason = std::string(119, 'x') + "é";  // 2-byte char would cross 120
  decoded = decode(encode_report_payload(report, kNow));
  REQUIRE(decoded.ok());
  CHECK(decoded->self_check.reason == std::string(119, 'x'));
}

TEST_CASE("a healthy node's report record in a 100-server fleet is at most 256 bytes") {
  Roster roster = test::sample_roster(100, 12);
  Report report;
  report.metrics = realistic_metrics();
  report.view.roster_version = 12;
  for (std::uint32_t t = 5; t < 100 && report.view.results.size() < 15; t += 6) {
    report.view.results.push_back(ok_result(t, 4321, kNow - 58'000));
  }
  report.view.results.push_back(
      failing(96, 3, kNow - 12'000, kNow - 190'000, ProbeFailure::tcp_timeout));
  Bytes payload = encode_report_payload(report, kNow);
  Bytes record = encode_signed_record(RecordKind::report, "de-fra-1", 1'700'000,
                                      kNow, payload, test::test_key(3).secret_key);
  std::printf("report payload %zu bytes, signed record %zu bytes (100-server fleet, 15 ok, "
              "1 failing)\n", payload.size(), record.size());
  CHECK(record.size() <= 256);
  auto decoded = decode_report_payload(payload, roster, 0, kNow);
  REQUIRE(decoded.ok());
  CHECK(decoded->view.results.size() == 16);
}

TEST_CASE("report structure rejections") {
  Bytes payload = encode_report_payload(sample_report(), kNow);
  for (std::size_t n = 0; n < payload.size(); ++n) {
    CAPTURE(n);
    auto decoded = decode(Bytes(payload.begin(), payload.begin() + n));
    REQUIRE_FALSE(decoded.ok());
    CHECK(decoded.code() == ReportError::malformed);
  }
  Bytes trailing = payload;
  trailing.push_back(0);
  expect_error(trailing, ReportError::malformed, "1 trailing bytes");
  expect_error(Bytes(kReportPayloadBytesMax + 1, 0), ReportError::oversize, "over 65536");
  expect_error(patched({}, [](Packer& p) { p.pack_array(2); p.pack_nil(); p.pack_nil(); }),
               ReportError::malformed, "top level: array of 2 elements, expected 3 or 4");
  expect_error(patched({0}, [](Packer& p) { p.pack_array(2); p.pack_true(); p.pack_true(); }),
               ReportError::malformed, "self_check: array of 2");
  expect_error(patched({0, 0}, uint_value(1)), ReportError::malformed, "must be booleans");
  expect_error(patched({0, 1}, [](Packer& p) { p.pack_nil(); }), ReportError::malformed,
               "must be booleans");
  expect_error(patched({0, 2}, uint_value(1)), ReportError::malformed, "self_check.reason: not a string");
  expect_error(patched({0, 2}, [](Packer& p) { p.pack(std::string(121, 'r')); }),
               ReportError::oversize, "self_check.reason: longer than 120 bytes");
  expect_error(patched({0, 2}, [](Packer& p) { p.pack(std::string("a\nb")); }),
               ReportError::malformed, "self_check.reason: not printable UTF-8");
  expect_error(patched({1}, [](Packer& p) { p.pack_array(9); for (int i = 0; i < 9; ++i) p.pack_uint8(0); }),
               ReportError::malformed, "metrics: array of 9 elements, expected 10");
  expect_error(patched({1, 4}, [](Packer& p) { p.pack_int8(-1); }), ReportError::malformed,
               "metrics.disk_total_mib: not a non-negative integer");
  expect_error(patched({1, 0}, uint_value(1001)), ReportError::impossible_value,
               "metrics.cpu_permille: 1001 is over 1000");
  expect_error(patched({1, 7}, uint_value(1ull << 32)), ReportError::impossible_value,
               "metrics.load_average_milli");
  expect_error(patched({1, 9}, uint_value(1ull << 32)), ReportError::impossible_value,
               "metrics.listener_connections");
  expect_error(patched({2}, uint_value(4)), ReportError::malformed, "view: not an array");
  expect_error(patched({2, 0}, [](Packer& p) { p.pack(std::string("4")); }),
               ReportError::malformed, "view.roster_version: not a non-negative integer");
  expect_error(patched({2, 1}, uint_value(6)), ReportError::malformed, "view.ok_bitmap: not a bin");
  expect_error(patched({2, 4}, uint_value(0)), ReportError::malformed, "view.failures: not an array");
  expect_error(patched({2, 4, 0}, [](Packer& p) { p.pack_array(4); for (int i = 0; i < 4; ++i) p.pack_uint8(1); }),
               ReportError::malformed, "view.failures[0]: array of 4");
  expect_error(patched({2, 4, 0, 3}, [](Packer& p) { p.pack(std::string("x")); }),
               ReportError::malformed, "view.failures[0].last_ok_age_ms: not a non-negative integer");
  expect_error(patched({2, 4, 0, 2}, [](Packer& p) { p.pack_int8(-5); }),
               ReportError::malformed, "view.failures[0].last_probe_age_ms: not a non-negative");
}

TEST_CASE("report bitmap and summary rules") {
  expect_error(patched({2, 1}, bin({0x86, 0x00})), ReportError::malformed,
               "trailing zero byte");
  expect_error(patched({2, 1}, bin({0x86, 0x04})), ReportError::unknown_target,
               "view.ok_bitmap: target 10 is outside the roster of 10");
  expect_error(patched({2, 1}, bin({0x87})), ReportError::self_target,
               "target 0 is the reporter itself");
  expect_error(patched({2, 1}, bin({0x8e})), ReportError::repeated_target,
               "target 3 is both ok and failing");
  expect_error(patched({2, 1}, bin(Bytes(513, 1))), ReportError::oversize,
               "view.ok_bitmap: longer than 512 bytes");
  expect_error(patched({2, 2}, uint_value(0)), ReportError::impossible_value,
               "view.ok_min_streak: 0 with ok targets");
  expect_error(patched({2, 2}, uint_value(kStreakMax + 1)), ReportError::impossible_value,
               "view.ok_min_streak: 1000001 is over 1000000");
  expect_error(patched({2, 3}, uint_value(kNow + 1)), ReportError::impossible_value,
               "view.ok_oldest_age_ms");
  Bytes no_ok = patched({2, 1}, bin({}));
  expect_error(test::patch_msgpack(no_ok, {2, 4}, failure_list({})), ReportError::impossible_value,
               "ok summary set but no ok targets");
}

// The sample with targets 1 and 7 flagged recovered: a sixth view element,
// bitmap 0x82 (targets 1 and 7 of byte 0).
Report recovered_sample() {
  Report report = sample_report();
  report.view.results[0].recovered = true;
  report.view.results[3].recovered = true;
  return report;
}

Bytes recovered_patched(std::function<void(Packer&)> replacement) {
  return test::patch_msgpack(encode_report_payload(recovered_sample(), kNow), {2, 5}, replacement);
}

TEST_CASE("recovered targets travel as a sixth view element, only when there is one") {
  Bytes plain = encode_report_payload(sample_report(), kNow);
  Bytes flagged = encode_report_payload(recovered_sample(), kNow);
  // The element is left out when nothing is flagged: the bytes of a report
  // without recoveries are what they were before the element existed.
  CHECK(flagged.size() == plain.size() + 3);  // bin 8 header, length, one byte
  CHECK(flagged[flagged.size() - 1] == 0x82);
  auto decoded = decode(flagged);
  REQUIRE(decoded.ok());
  CHECK(*decoded == recovered_sample());
  CHECK(encode_report_payload(*decoded, kNow) == flagged);
  CHECK(validate_report_payload(flagged, roster10(), 0, kNow).ok());
  auto unflagged = decode(plain);
  REQUIRE(unflagged.ok());
  CHECK(std::none_of(unflagged->view.results.begin(), unflagged->view.results.end(),
                     [](const ProbeResult& r) { return r.recovered; }));
}

// Refused by the decoder with `code` and a message holding `fragment`, and
// by validate_report_payload with the same code.
void refused(const Bytes& payload, ReportError code, const std::string& fragment) {
  expect_error(payload, code, fragment);
  auto checked = validate_report_payload(payload, roster10(), 0, kNow);
  REQUIRE_FALSE(checked.ok());
  CHECK(checked.code() == code);
}

TEST_CASE("recovered bitmap rules") {
  refused(recovered_patched(bin({})), ReportError::malformed,
          "view.recovered: empty (the element is left out instead)");
  refused(recovered_patched(bin({0x82, 0x00})), ReportError::malformed,
          "view.recovered: trailing zero byte");
  refused(recovered_patched(bin({0x8a})), ReportError::impossible_value,
          "view.recovered: target 3 is not an ok target");  // 3 fails
  refused(recovered_patched(bin({0x82, 0x01})), ReportError::impossible_value,
          "view.recovered: target 8 is not an ok target");  // 8 has no result
  refused(recovered_patched(uint_value(2)), ReportError::malformed, "view.recovered: not a bin");
  // The message names the bin that is over (meshctl once said view.ok_bitmap).
  refused(recovered_patched(bin(Bytes(513, 1))), ReportError::oversize,
          "report payload: view.recovered: longer than 512 bytes");
  // A long bin where the layout has none is named as such.
  refused(test::patch_msgpack(encode_report_payload(recovered_sample(), kNow), {0, 2}, bin(Bytes(600, 1))),
          ReportError::oversize, "report payload: a bin: longer than 512 bytes");
}

TEST_CASE("report failure entry rules") {
  auto failures = [](std::vector<std::array<std::int64_t, 5>> e) {
    return patched({2, 4}, failure_list(std::move(e)));
  };
  CHECK(decode(failures({{3, 2, 10, -1, 1}})).ok());
  expect_error(failures({{10, 2, 10, -1, 1}}), ReportError::unknown_target,
               "view.failures[0]: target 10 is outside the roster of 10");
  expect_error(failures({{4096, 2, 10, -1, 1}}), ReportError::unknown_target,
               "view.failures[0].target: 4096 is beyond any roster");
  expect_error(failures({{0, 2, 10, -1, 1}}), ReportError::self_target, "reporter itself");
  // With another reporter, target 0 is fine and its own index is refused.
  CHECK(decode(failures({{0, 2, 10, -1, 1}}), 5).ok());
  expect_error(failures({{5, 2, 10, -1, 1}}), ReportError::self_target, "target 5", 5);
  expect_error(failures({{3, 2, 10, -1, 1}, {3, 2, 10, -1, 1}}), ReportError::repeated_target,
               "view.failures[1]: target 3 repeated");
  expect_error(failures({{4, 2, 10, -1, 1}, {3, 2, 10, -1, 1}}), ReportError::malformed,
               "out of order");
  expect_error(failures({{1, 2, 10, -1, 1}}), ReportError::repeated_target,
               "target 1 is both ok and failing");
  expect_error(failures({{3, 0, 10, -1, 1}}), ReportError::impossible_value,
               "fail_streak: 0 on a failing target");
  expect_error(failures({{3, kStreakMax + 1, 10, -1, 1}}), ReportError::impossible_value,
               "fail_streak: 1000001 is over 1000000");
  expect_error(failures({{3, 2, 10, -1, 0}}), ReportError::impossible_value,
               "reason: none on a failing target");
  expect_error(failures({{3, 2, 10, -1, kProbeFailureMax + 1}}), ReportError::impossible_value,
               "reason: 9 is over 8");
  expect_error(failures({{3, 2, kNow + 1, -1, 1}}), ReportError::impossible_value,
               "last_probe_age_ms");
  expect_error(failures({{3, 2, 10, 5, 1}}), ReportError::impossible_value,
               "last_ok_age_ms: after the last probe");
  expect_error(failures({{3, 2, 10, kNow, 1}}), ReportError::impossible_value, "at time 0");
}

// An array of `values`, as the gaps form of a target set.
std::function<void(Packer&)> gaps(std::vector<std::uint64_t> values) {
  return [values](Packer& p) {
    p.pack_array(static_cast<std::uint32_t>(values.size()));
    for (std::uint64_t v : values) p.pack_uint64(v);
  };
}

// A trimmed bitmap of `targets`.
Bytes bitmap_of(const std::vector<std::uint32_t>& targets) {
  Bytes bits;
  for (std::uint32_t t : targets) {
    if (bits.size() <= t / 8) bits.resize(t / 8 + 1, 0);
    bits[t / 8] |= static_cast<std::uint8_t>(1u << (t % 8));
  }
  return bits;
}

bool holds(const Bytes& payload, const Bytes& piece) {
  return std::search(payload.begin(), payload.end(), piece.begin(), piece.end()) != payload.end();
}

TEST_CASE("a target set is written as gaps when that is shorter, and either form reads the same") {
  // In a large roster a node's few targets are far apart: 115 bytes of
  // bitmap for three targets, 7 bytes of gaps (1, 139, 760).
  Report wide;
  wide.metrics = realistic_metrics();
  wide.view.roster_version = 99;  // not roster10()'s: only the layout is checked
  for (std::uint32_t t : {1u, 140u, 900u}) wide.view.results.push_back(ok_result(t, 9, kNow - 5000));
  wide.view.results[1].recovered = true;
  wide.view.results[2].recovered = true;
  const Bytes payload = encode_report_payload(wide, kNow);
  CHECK(holds(payload, {0x93, 0x01, 0xcc, 0x8b, 0xcd, 0x02, 0xf8}));  // ok: gaps 1, 139, 760
  CHECK(holds(payload, {0x92, 0xcc, 0x8c, 0xcd, 0x02, 0xf8}));        // recovered: 140, 760
  auto decoded = decode(payload);
  REQUIRE(decoded.ok());
  CHECK(*decoded == wide);
  CHECK(encode_report_payload(*decoded, kNow) == payload);
  CHECK(validate_report_payload(payload, roster10(), 0, kNow).ok());
  // The same sets as bitmaps (what an encoder may also write) read alike.
  Bytes as_bitmaps = test::patch_msgpack(payload, {2, 1}, bin(bitmap_of({1, 140, 900})));
  as_bitmaps = test::patch_msgpack(as_bitmaps, {2, 5}, bin(bitmap_of({140, 900})));
  CHECK(as_bitmaps.size() > payload.size() + 200);
  auto from_bitmaps = decode(as_bitmaps);
  REQUIRE(from_bitmaps.ok());
  CHECK(*from_bitmaps == wide);
  // Dense sets stay bitmaps: the sample's ok targets 1, 2, 7 are `c4 01 86`
  // (3 bytes; as gaps `93 01 01 05`, 4), its recovered 1 and 7 a tie, `c4 01 82`.
  CHECK(holds(encode_report_payload(sample_report(), kNow), {0xc4, 0x01, 0x86}));
  CHECK(holds(encode_report_payload(recovered_sample(), kNow), {0xc4, 0x01, 0x82}));
  // Either form of the sample decodes to the sample.
  auto sample_gaps = decode(patched({2, 1}, gaps({1, 1, 5})));
  REQUIRE(sample_gaps.ok());
  CHECK(*sample_gaps == sample_report());
}

TEST_CASE("a healthy node's report record in a 1000-server fleet: its 60 targets as gaps") {
  Roster roster = test::sample_roster(1000, 12);
  Report report;
  report.metrics = realistic_metrics();
  report.view.roster_version = 12;
  for (std::uint32_t t = 7; report.view.results.size() < 60; t += 16) {
    report.view.results.push_back(ok_result(t, 4321, kNow - 58'000));
  }
  Bytes payload = encode_report_payload(report, kNow);
  Bytes record = encode_signed_record(RecordKind::report, "de-fra-1", 1'700'000, kNow, payload,
                                      test::test_key(3).secret_key);
  std::printf("report payload %zu bytes, signed record %zu bytes (1000-server fleet, 60 ok)\n", payload.size(),
              record.size());
  CHECK(record.size() <= 220);  // 215; 272 with the 121-byte bitmap of targets up to 951
  auto decoded = decode_report_payload(payload, roster, 0, kNow);
  REQUIRE(decoded.ok());
  CHECK(*decoded == report);
}

TEST_CASE("target set rules in the gaps form") {
  refused(patched({2, 1}, gaps({})), ReportError::malformed, "view.ok_bitmap: an empty array");
  refused(patched({2, 1}, gaps({1, 0})), ReportError::repeated_target, "view.ok_bitmap[1]: a gap of 0");
  refused(patched({2, 1}, [](Packer& p) { p.pack_array(2); p.pack_uint8(1); p.pack(std::string("x")); }),
          ReportError::malformed, "view.ok_bitmap[1]: not an unsigned integer");
  refused(patched({2, 1}, [](Packer& p) { p.pack_array(1); p.pack_int8(-1); }), ReportError::malformed,
          "view.ok_bitmap[0]: not an unsigned integer");
  refused(patched({2, 1}, [](Packer& p) { p.pack_nil(); }), ReportError::malformed,
          "view.ok_bitmap: not a bin or an array");
  refused(patched({2, 1}, gaps({4096})), ReportError::unknown_target, "view.ok_bitmap[0]: a target beyond any roster");
  refused(patched({2, 1}, gaps({1, 4095})), ReportError::unknown_target, "view.ok_bitmap[1]: a target beyond");
  refused(patched({2, 1}, gaps({1, ~std::uint64_t{0}})), ReportError::unknown_target, "a target beyond any roster");
  refused(patched({2, 1}, gaps({1, 9})), ReportError::unknown_target,
          "view.ok_bitmap: target 10 is outside the roster of 10");
  refused(patched({2, 1}, gaps({0, 1})), ReportError::self_target, "target 0 is the reporter itself");
  refused(patched({2, 1}, gaps({1, 2})), ReportError::repeated_target, "target 3 is both ok and failing");
  refused(patched({2, 1}, gaps(std::vector<std::uint64_t>(4097, 1))), ReportError::oversize,
          "an array longer than 4096 elements");
  // The recovered set: a subset of the ok targets, never empty.
  refused(recovered_patched(gaps({})), ReportError::malformed, "view.recovered: an empty array");
  refused(recovered_patched(gaps({1, 0})), ReportError::repeated_target, "view.recovered[1]: a gap of 0");
  refused(recovered_patched(gaps({1, 2})), ReportError::impossible_value,
          "view.recovered: target 3 is not an ok target");
  refused(recovered_patched(gaps({8})), ReportError::impossible_value, "view.recovered: target 8 is not an ok target");
  // A long recovered bin after ok targets in the gaps form is still named.
  refused(test::patch_msgpack(recovered_patched(bin(Bytes(513, 1))), {2, 1}, gaps({1, 1, 5})), ReportError::oversize,
          "report payload: view.recovered: longer than 512 bytes");
  auto accepted = decode(recovered_patched(gaps({1, 6})));
  REQUIRE(accepted.ok());
  CHECK(*accepted == recovered_sample());
}

TEST_CASE("a view on another roster version gets structure-only checks") {
  Report report = sample_report();
  report.view.roster_version = 3;  // roster10() is version 4
  report.view.results.push_back(failing(0, 2, kNow, 0, ProbeFailure::tcp_refused));
  report.view.results.push_back(ok_result(200, 9, kNow - 5000));
  std::sort(report.view.results.begin(), report.view.results.end(),
            [](const ProbeResult& a, const ProbeResult& b) { return a.target < b.target; });
  auto decoded = decode(encode_report_payload(report, kNow));
  REQUIRE(decoded.ok());
  CHECK(*decoded == report);
  Bytes bad = test::patch_msgpack(encode_report_payload(report, kNow), {2, 4},
                                  failure_list({{5000, 1, 0, -1, 1}}));
  expect_error(bad, ReportError::unknown_target, "beyond any roster");
  bad = test::patch_msgpack(encode_report_payload(report, kNow), {2, 4},
                            failure_list({{3, 0, 0, -1, 1}}));
  expect_error(bad, ReportError::impossible_value, "fail_streak: 0");
}

TEST_CASE("names of failure reasons and report errors") {
  CHECK(std::string(to_string(ProbeFailure::none)) == "none");
  CHECK(std::string(to_string(ProbeFailure::tls_bad_peer)) == "tls_bad_peer");
  CHECK(std::string(to_string(ReportError::self_target)) == "self_target");
}

TEST_CASE("decode_report_failures reads the failing targets alone, strictly where it reads") {
  for (const Report& report : {sample_report(), recovered_sample()}) {
    auto read = decode_report_failures(encode_report_payload(report, kNow), kNow);
    REQUIRE(read.ok());
    CHECK(read->roster_version == 4);
    std::vector<ProbeResult> failing_only;
    for (const ProbeResult& r : report.view.results) {
      if (r.fail_streak > 0) failing_only.push_back(r);
    }
    CHECK(read->failures == failing_only);
  }
  Report healthy = sample_report();
  std::erase_if(healthy.view.results, [](const ProbeResult& r) { return r.fail_streak > 0; });
  auto none = decode_report_failures(encode_report_payload(healthy, kNow), kNow);
  REQUIRE(none.ok());
  CHECK(none->failures.empty());
  // Every truncation is an error, never a partial list.
  const Bytes payload = encode_report_payload(sample_report(), kNow);
  for (std::size_t n = 0; n < payload.size(); ++n) {
    CAPTURE(n);
    auto cut = decode_report_failures(Bytes(payload.begin(), payload.begin() + n), kNow);
    CHECK_FALSE(cut.ok());
  }
  auto refused = [](const Bytes& bad, ReportError code, const std::string& fragment) {
    auto read = decode_report_failures(bad, kNow);
    REQUIRE_FALSE(read.ok());
    CHECK(read.code() == code);
    CHECK_MESSAGE(contains(read.message(), fragment), read.message());
  };
  refused(Bytes(kReportPayloadBytesMax + 1, 0), ReportError::oversize, "over 65536");
  refused(patched({}, [](Packer& p) { p.pack_array(2); p.pack_nil(); p.pack_nil(); }),
          ReportError::malformed, "top level: array of 2 elements, expected 3 or 4");
  refused(patched({2}, uint_value(4)), ReportError::malformed, "view: not an array");
  refused(patched({2, 4}, uint_value(0)), ReportError::malformed, "view.failures: not an array");
  refused(patched({2, 4, 0, 1}, uint_value(0)), ReportError::impossible_value,
          "view.failures[0].fail_streak: 0 on a failing target");
  refused(patched({2, 4, 1, 4}, uint_value(200)), ReportError::impossible_value,
          "view.failures[1].reason: 200 is over");
}

// Flapping (docs/VERDICTS.md, "Flapping") travels as two more self_check
// elements, only when the node flapped.
TEST_CASE("flapping travels in self_check, only when the node flapped") {
  Report report = sample_report();
  Bytes plain = encode_report_payload(report, kNow);
  report.flapping = {5, 240'000};
  Bytes flagged = encode_report_payload(report, kNow);
  CHECK(flagged.size() == plain.size() + 1 + 5);  // fixint 5, uint32 240000
  auto decoded = decode(flagged);
  REQUIRE(decoded.ok());
  CHECK(decoded->flapping == Flapping{5, 240'000});
  CHECK(*decoded == report);
  CHECK(encode_report_payload(*decoded, kNow) == flagged);
  CHECK(validate_report_payload(flagged, roster10(), 0, kNow).ok());
  // One change and no hold-down is still said.
  report.flapping = {1, 0};
  auto once = decode(encode_report_payload(report, kNow));
  REQUIRE(once.ok());
  CHECK(once->flapping == Flapping{1, 0});
  auto unflagged = decode(plain);
  REQUIRE(unflagged.ok());
  CHECK(unflagged->flapping == Flapping{});
}

TEST_CASE("flapping rules") {
  auto self_check = [](std::uint64_t changes, std::uint64_t hold) {
    return [changes, hold](Packer& p) {
      p.pack_array(5);
      p.pack_true();
      p.pack_true();
      p.pack(std::string());
      p.pack_uint64(changes);
      p.pack_uint64(hold);
    };
  };
  CHECK(decode(patched({0}, self_check(3, 60'000))).ok());
  refused(patched({0}, self_check(0, 0)), ReportError::malformed,
          "self_check.flap_changes: 0 is written by leaving it out");
  refused(patched({0}, self_check(kFlapChangesMax + 1, 0)), ReportError::impossible_value,
          "self_check.flap_changes");
  refused(patched({0}, self_check(2, static_cast<std::uint64_t>(kFlapHoldMsMax) + 1)),
          ReportError::impossible_value, "self_check.hold_ms");
  refused(patched({0}, [](Packer& p) { p.pack_array(4); p.pack_true(); p.pack_true(); p.pack(std::string()); p.pack_uint8(1); }),
          ReportError::malformed, "self_check: array of 4 elements, expected 3 or 5");
  refused(patched({0}, [](Packer& p) {
            p.pack_array(5); p.pack_true(); p.pack_true(); p.pack(std::string());
            p.pack(std::string("2")); p.pack_uint8(0);
          }),
          ReportError::malformed, "self_check.flap_changes");
}

// A node that started lately says so (docs/PROTOCOL.md, "Report payload",
// flags): a fourth top-level element, only when a flag is set.
TEST_CASE("a warming node's flag travels as a fourth element, only when set") {
  Report report = sample_report();
  Bytes plain = encode_report_payload(report, kNow);
  report.warming = true;
  Bytes flagged = encode_report_payload(report, kNow);
  CHECK(flagged.size() == plain.size() + 1);  // fixint 1
  CHECK(flagged[0] == 0x94);                  // fixarray of 4
  auto decoded = decode(flagged);
  REQUIRE(decoded.ok());
  CHECK(decoded->warming);
  CHECK(*decoded == report);
  CHECK(encode_report_payload(*decoded, kNow) == flagged);
  CHECK(validate_report_payload(flagged, roster10(), 0, kNow).ok());
  auto unflagged = decode(plain);
  REQUIRE(unflagged.ok());
  CHECK_FALSE(unflagged->warming);
  CHECK_FALSE(unflagged->alert_sender);
}

// The node that delivers the fleet's alerts says so (flags bit 1,
// docs/PANELS.md "Takeover"); both flags share the one element.
TEST_CASE("the alert sender's flag shares the fourth element with warming") {
  Report report = sample_report();
  const Bytes plain = encode_report_payload(report, kNow);
  report.alert_sender = true;
  const Bytes sender = encode_report_payload(report, kNow);
  CHECK(sender.size() == plain.size() + 1);
  CHECK(sender[0] == 0x94);
  CHECK(sender.back() == 0x02);
  auto decoded = decode(sender);
  REQUIRE(decoded.ok());
  CHECK(decoded->alert_sender);
  CHECK_FALSE(decoded->warming);
  CHECK(*decoded == report);
  report.warming = true;
  const Bytes both = encode_report_payload(report, kNow);
  CHECK(both.back() == 0x03);
  auto both_decoded = decode(both);
  REQUIRE(both_decoded.ok());
  CHECK(*both_decoded == report);
  CHECK(validate_report_payload(both, roster10(), 0, kNow).ok());
}

TEST_CASE("flags rules") {
  const Bytes plain = encode_report_payload(sample_report(), kNow);
  auto with_flags = [&](const std::function<void(Packer&)>& pack_flags) {
    Bytes out = plain;
    out[0] = 0x94;  // the fixarray of 3 becomes one of 4
    msgpack::sbuffer buffer;
    Packer packer(buffer);
    pack_flags(packer);
    out.insert(out.end(), buffer.data(), buffer.data() + buffer.size());
    return out;
  };
  CHECK(decode(with_flags([](Packer& p) { p.pack_uint8(1); })).ok());
  refused(with_flags([](Packer& p) { p.pack_uint8(0); }), ReportError::malformed,
          "flags: 0 is written by leaving it out");
  CHECK(decode(with_flags([](Packer& p) { p.pack_uint8(2); })).ok());
  CHECK(decode(with_flags([](Packer& p) { p.pack_uint8(3); })).ok());
  refused(with_flags([](Packer& p) { p.pack_uint8(4); }), ReportError::impossible_value,
          "flags: 4 sets an unknown bit");
  refused(with_flags([](Packer& p) { p.pack_uint8(6); }), ReportError::impossible_value,
          "flags: 6 sets an unknown bit");
  refused(with_flags([](Packer& p) { p.pack_uint64(~std::uint64_t{0}); }), ReportError::impossible_value,
          "sets an unknown bit");
  refused(with_flags([](Packer& p) { p.pack_true(); }), ReportError::malformed,
          "flags: not a non-negative integer");
  refused(with_flags([](Packer& p) { p.pack_int8(-1); }), ReportError::malformed, "flags");
  Bytes five = with_flags([](Packer& p) { p.pack_uint8(1); p.pack_uint8(1); });
  five[0] = 0x95;
  refused(five, ReportError::malformed, "top level: array of 5 elements, expected 3 or 4");
  Bytes missing = plain;
  missing[0] = 0x94;  // says 4, holds 3
  refused(missing, ReportError::malformed, "");
}

// An unanswered failure (docs/VERDICTS.md, "Silence and answers") carries
// when its streak began as a sixth failure element.
TEST_CASE("an unanswered failure carries its start, only while unanswered") {
  Report report = sample_report();
  Bytes plain = encode_report_payload(report, kNow);
  report.view.results[2].unanswered_since_ms = kNow - 20'000;  // target 3: ok at -300 s, probed at -2 s
  Bytes flagged = encode_report_payload(report, kNow);
  CHECK(flagged.size() == plain.size() + 3);  // uint16 age 20000
  auto decoded = decode(flagged);
  REQUIRE(decoded.ok());
  CHECK(decoded->view.results[2].unanswered_since_ms == kNow - 20'000);
  CHECK(*decoded == report);
  CHECK(encode_report_payload(*decoded, kNow) == flagged);
  CHECK(validate_report_payload(flagged, roster10(), 0, kNow).ok());
  auto answered = decode(plain);
  REQUIRE(answered.ok());
  for (const ProbeResult& r : answered->view.results) CHECK(r.unanswered_since_ms == 0);
}

TEST_CASE("unanswered failure rules") {
  // [target, streak, probe age, ok age | nil, reason, unanswered since age]
  auto failures = [](std::int64_t ok_age, std::int64_t since_age) {
    return patched({2, 4}, [ok_age, since_age](Packer& p) {
      p.pack_array(1);
      p.pack_array(6);
      p.pack_uint8(3);
      p.pack_uint8(2);
      p.pack_uint32(10'000);
      if (ok_age < 0) p.pack_nil(); else p.pack_int64(ok_age);
      p.pack_uint8(1);
      p.pack_int64(since_age);
    });
  };
  CHECK(decode(failures(-1, 10'000)).ok());      // since the last probe: its first failure
  CHECK(decode(failures(90'000, 60'000)).ok());  // after the last ok
  refused(failures(-1, 9'999), ReportError::impossible_value,
          "view.failures[0].unanswered_since_age_ms: after the last probe");
  refused(failures(60'000, 60'000), ReportError::impossible_value,
          "unanswered_since_age_ms: after the last probe, at or before the last ok");
  refused(failures(-1, static_cast<std::int64_t>(kNow)), ReportError::impossible_value,
          "unanswered_since_age_ms");  // at time 0
  refused(failures(-1, static_cast<std::int64_t>(kNow) + 1), ReportError::impossible_value,
          "unanswered_since_age_ms");
  refused(failures(-1, -1), ReportError::malformed, "unanswered_since_age_ms: not a non-negative");
  refused(patched({2, 4}, [](Packer& p) {
            p.pack_array(1);
            p.pack_array(7);
            for (int i = 0; i < 7; ++i) p.pack_uint8(1);
          }),
          ReportError::malformed, "view.failures[0]: array of 7 elements, expected 5 or 6");
}
