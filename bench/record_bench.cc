// Record codec benchmarks: the acceptance path every received record takes
// (decode_envelope, then decode_report_payload; signature checks are
// memoized by the simulator and left out), and the encoders.
//
// Realistic reports (docs/PROTOCOL.md, "Report payload", "Size"):
//   100 servers:  15 ok targets, 1 failing (the 178-byte record of the doc);
//   1000 servers: 150 ok targets spread over the roster, 3 failing.
// Figures: bench/README.md.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "record/envelope.h"
#include "record/keys.h"
#include "record/report.h"
#include "record/roster.h"

using namespace mesh;

namespace {

constexpr UnixMs kNow = 1'700'000'000'000;
constexpr std::uint64_t kRosterVersion = 12;

Roster bench_roster(std::uint32_t servers) {
  Roster roster;
  roster.version = kRosterVersion;
  for (std::uint32_t i = 0; i < servers; ++i) {
    ServerEntry server;
    server.id = "s-" + std::to_string(i);
    server.country = "DE";
    roster.servers.push_back(std::move(server));
  }
  return roster;
}

Report bench_report(std::uint32_t servers) {
  std::uint32_t ok_targets = servers * 15 / 100;
  std::uint32_t failing = servers <= 100 ? 1 : 3;
  std::uint32_t step = servers / (ok_targets + failing);
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

const Fixture& fixture(std::uint32_t servers) {
  static Fixture fixtures[2];
  Fixture& f = fixtures[servers == 100 ? 0 : 1];
  if (f.record.empty()) {
    f.key = key_pair_from_seed(Bytes(32, 0x41));
    f.roster = bench_roster(servers);
    f.report = bench_report(servers);
    f.payload = encode_report_payload(f.report, kNow);
    f.record = encode_signed_record(RecordKind::report, "s-0", 1'700'000, kNow, f.payload,
                                    f.key.secret_key);
  }
  return f;
}

void BM_DecodeEnvelope(benchmark::State& state) {
  const Fixture& f = fixture(static_cast<std::uint32_t>(state.range(0)));
  for (auto _ : state) {
    auto envelope = decode_envelope(f.record);
    benchmark::DoNotOptimize(envelope);
  }
  state.counters["record_bytes"] = static_cast<double>(f.record.size());
}

// The copy-free variant, for paths that decide before they keep.
void BM_DecodeEnvelopeView(benchmark::State& state) {
  const Fixture& f = fixture(static_cast<std::uint32_t>(state.range(0)));
  for (auto _ : state) {
    auto envelope = decode_envelope_view(f.record);
    benchmark::DoNotOptimize(envelope);
  }
}

void BM_DecodeReportPayload(benchmark::State& state) {
  const Fixture& f = fixture(static_cast<std::uint32_t>(state.range(0)));
  for (auto _ : state) {
    auto report = decode_report_payload(f.payload, f.roster, 0, kNow);
    benchmark::DoNotOptimize(report);
  }
  state.counters["payload_bytes"] = static_cast<double>(f.payload.size());
}

// The simulator's per-reception cost: envelope, then its report payload.
void BM_DecodeRecordAndReport(benchmark::State& state) {
  const Fixture& f = fixture(static_cast<std::uint32_t>(state.range(0)));
  for (auto _ : state) {
    auto envelope = decode_envelope(f.record);
    auto report = decode_report_payload(envelope->payload, f.roster, 0, envelope->timestamp_ms);
    benchmark::DoNotOptimize(report);
  }
}

void BM_EncodeReportPayload(benchmark::State& state) {
  const Fixture& f = fixture(static_cast<std::uint32_t>(state.range(0)));
  for (auto _ : state) {
    Bytes payload = encode_report_payload(f.report, kNow);
    benchmark::DoNotOptimize(payload);
  }
}

// Includes the Ed25519 signature, which dominates.
void BM_EncodeSignedRecord(benchmark::State& state) {
  const Fixture& f = fixture(static_cast<std::uint32_t>(state.range(0)));
  for (auto _ : state) {
    Bytes record = encode_signed_record(RecordKind::report, "s-0", 1'700'000, kNow, f.payload,
                                        f.key.secret_key);
    benchmark::DoNotOptimize(record);
  }
}

BENCHMARK(BM_DecodeEnvelope)->Arg(100)->Arg(1000);
BENCHMARK(BM_DecodeEnvelopeView)->Arg(100)->Arg(1000);
BENCHMARK(BM_DecodeReportPayload)->Arg(100)->Arg(1000);
BENCHMARK(BM_DecodeRecordAndReport)->Arg(100)->Arg(1000);
BENCHMARK(BM_EncodeReportPayload)->Arg(100)->Arg(1000);
BENCHMARK(BM_EncodeSignedRecord)->Arg(100)->Arg(1000);

}  // namespace

BENCHMARK_MAIN();
