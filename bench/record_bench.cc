// Record codec benchmarks: the acceptance path every received record takes
// (decode_envelope, then decode_report_payload or, where the report is not
// kept, validate_report_payload; signature checks are memoized by the
// simulator and left out), and the encoders.
//
// Realistic reports (docs/PROTOCOL.md, "Report payload", "Size"), named by
// the benchmark arguments servers:N/targets:T:
//   100/16:   15 ok targets, 1 failing (the 178-byte record of the doc);
//   1000/153: 150 ok targets spread over the roster, 3 failing;
//   1000/45:  a healthy witness view (15 countries x 3 witnesses, all ok),
//             the kind of report the 1000-node simulator checks ~1 M times
//             per simulated minute (all nodes together).
// Figures: bench/README.md.
#include <benchmark/benchmark.h>

#include <iterator>
#include <string>
#include <vector>

#include "bench/bench_roster.h"
#include "common/check.h"
#include "record/envelope.h"
#include "record/keys.h"
#include "record/report.h"
#include "record/roster.h"

using namespace mesh;

namespace {

constexpr UnixMs kNow = 1'700'000'000'000;
constexpr std::uint64_t kRosterVersion = 12;

struct Scenario {
  std::uint32_t servers;
  std::uint32_t ok_targets;
  std::uint32_t failing;
};
constexpr Scenario kScenarios[] = {{100, 15, 1}, {1000, 150, 3}, {1000, 45, 0}};
constexpr std::size_t kScenarioCount = std::size(kScenarios);

Report bench_report(const Scenario& scenario) {
  std::uint32_t ok_targets = scenario.ok_targets;
  std::uint32_t failing = scenario.failing;
  std::uint32_t step = scenario.servers / (ok_targets + failing);
  Report report;
  report.metrics = Metrics{137,    24'117'248, 67'108'864, 310'000, 953'674,
                           12'500'000, 12'100'000, 1420, 2'592'000, 412};
  report.view.roster_version = kRosterVersion;
  for (std::uint32_t n = 0; n < ok_targets + failing; ++n) {
    std::uint32_t target = 1 + n * step;
    if (n < ok_targets) {
      report.view.results.push_back(
          ProbeResult{target, 0, 4321, kNow - 58'000, kNow - 58'000, ProbeFailure::none});
    } else {
      report.view.results.push_back(ProbeResult{target, 3, 0, kNow - 12'000, kNow - 190'000,
                                                ProbeFailure::tcp_timeout});
    }
  }
  return report;
}

struct Fixture {
  Roster roster;
  Report report;
  Bytes payload;
  Bytes record;
  KeyPair key;
};

// The fixture of the benchmark's arguments (servers, targets).
const Fixture& fixture(const benchmark::State& state) {
  static Fixture fixtures[kScenarioCount];
  std::size_t i = 0;
  while (i < kScenarioCount &&
         (kScenarios[i].servers != state.range(0) ||
          kScenarios[i].ok_targets + kScenarios[i].failing != state.range(1))) {
    ++i;
  }
  MESH_CHECK(i < kScenarioCount, "a benchmark registered with no matching scenario");
  Fixture& f = fixtures[i];
  if (f.record.empty()) {
    f.key = key_pair_from_seed(Bytes(32, 0x41));
    f.roster = bench::bench_roster(kScenarios[i].servers, kRosterVersion);
    f.report = bench_report(kScenarios[i]);
    f.payload = encode_report_payload(f.report, kNow);
    f.record = encode_signed_record(RecordKind::report, "s-0", 1'700'000, kNow, f.payload,
                                    f.key.secret_key);
  }
  return f;
}

void BM_DecodeEnvelope(benchmark::State& state) {
  const Fixture& f = fixture(state);
  for (auto _ : state) {
    auto envelope = decode_envelope(f.record);
    benchmark::DoNotOptimize(envelope);
  }
  state.counters["record_bytes"] = static_cast<double>(f.record.size());
}

// The copy-free variant, for paths that decide before they keep.
void BM_DecodeEnvelopeView(benchmark::State& state) {
  const Fixture& f = fixture(state);
  for (auto _ : state) {
    auto envelope = decode_envelope_view(f.record);
    benchmark::DoNotOptimize(envelope);
  }
}

void BM_DecodeReportPayload(benchmark::State& state) {
  const Fixture& f = fixture(state);
  for (auto _ : state) {
    auto report = decode_report_payload(f.payload, f.roster, 0, kNow);
    benchmark::DoNotOptimize(report);
  }
  state.counters["payload_bytes"] = static_cast<double>(f.payload.size());
}

// The verdict alone (no Report built), for nodes that do not keep reports.
void BM_ValidateReportPayload(benchmark::State& state) {
  const Fixture& f = fixture(state);
  for (auto _ : state) {
    auto status = validate_report_payload(f.payload, f.roster, 0, kNow);
    benchmark::DoNotOptimize(status);
  }
  state.counters["payload_bytes"] = static_cast<double>(f.payload.size());
}

// The simulator's per-reception cost: envelope, then its report payload.
void BM_DecodeRecordAndReport(benchmark::State& state) {
  const Fixture& f = fixture(state);
  for (auto _ : state) {
    auto envelope = decode_envelope(f.record);
    auto report = decode_report_payload(envelope->payload, f.roster, 0, envelope->timestamp_ms);
    benchmark::DoNotOptimize(report);
  }
}

void BM_EncodeReportPayload(benchmark::State& state) {
  const Fixture& f = fixture(state);
  for (auto _ : state) {
    Bytes payload = encode_report_payload(f.report, kNow);
    benchmark::DoNotOptimize(payload);
  }
}

// Includes the Ed25519 signature, which dominates.
void BM_EncodeSignedRecord(benchmark::State& state) {
  const Fixture& f = fixture(state);
  for (auto _ : state) {
    Bytes record = encode_signed_record(RecordKind::report, "s-0", 1'700'000, kNow, f.payload,
                                        f.key.secret_key);
    benchmark::DoNotOptimize(record);
  }
}

void scenarios(benchmark::internal::Benchmark* bench) {
  bench->ArgNames({"servers", "targets"});
  for (const Scenario& s : kScenarios) {
    bench->Args({s.servers, s.ok_targets + s.failing});
  }
}

BENCHMARK(BM_DecodeEnvelope)->Apply(scenarios);
BENCHMARK(BM_DecodeEnvelopeView)->Apply(scenarios);
BENCHMARK(BM_DecodeReportPayload)->Apply(scenarios);
BENCHMARK(BM_ValidateReportPayload)->Apply(scenarios);
BENCHMARK(BM_DecodeRecordAndReport)->Apply(scenarios);
BENCHMARK(BM_EncodeReportPayload)->Apply(scenarios);
BENCHMARK(BM_EncodeSignedRecord)->Apply(scenarios);

}  // namespace

BENCHMARK_MAIN();
