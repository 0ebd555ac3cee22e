// The floor of one record delivery: the least work any node must do for
// each record it receives, whatever the gossip design, as long as the
// issue's rules hold (every frame sealed and opened with libsodium under
// per-pair keys; every node checks every record's envelope and payload).
//
// One iteration is one frame of kRecordsPerFrame healthy reports of a
// 1000-server fleet (the mean frame of `meshsim --nodes 1000`: ~1.4 KB):
// copy the records into the frame, seal it, open it, then decode each
// record's envelope in place and validate its payload. Left out, so the
// figure stays a lower bound: the signature check (memoized in meshsim),
// the store, the outbox, IHAVE and SYNC, the prober and the event loop.
// All data stay hot in cache, which a 1000-node run never has.
//
// The counter `s_per_sim_hour_n1000` scales the per-record time to what a
// simulated hour at N = 1000 delivers: 1000 nodes × 60 reports an hour,
// each to the 999 other nodes. Figures: bench/README.md.
#include <benchmark/benchmark.h>

#include <cstring>
#include <string>
#include <vector>

#include "bench/bench_roster.h"
#include "common/check.h"
#include "gossip/link.h"
#include "record/envelope.h"
#include "record/keys.h"
#include "record/report.h"
#include "record/roster.h"

using namespace mesh;
using namespace mesh::gossip;

namespace {

constexpr UnixMs kNow = 1'700'000'000'000;
constexpr std::uint64_t kRosterVersion = 12;
constexpr std::uint32_t kServers = 1000;
constexpr std::uint32_t kTargets = 45;  // 15 countries × 3 witnesses, all ok
constexpr std::size_t kRecordsPerFrame = 5;
constexpr double kDeliveriesPerSimHour = 1000.0 * 60.0 * 999.0;

struct Fixture {
  Roster roster = bench::bench_roster(kServers, kRosterVersion);
  std::vector<Bytes> records;  // one per origin s-0 .. s-(kRecordsPerFrame-1)
  KeyPair a = generate_key_pair();
  KeyPair b = generate_key_pair();

  Fixture() {
    for (std::uint32_t origin = 0; origin < kRecordsPerFrame; ++origin) {
      Report report;
      report.metrics = Metrics{137,        24'117'248, 67'108'864, 310'000, 953'674,
                               12'500'000, 12'100'000, 1420,       2'592'000, 412};
      report.view.roster_version = kRosterVersion;
      for (std::uint32_t n = 0; n < kTargets; ++n) {
        const std::uint32_t target = (origin + 1 + n * (kServers / kTargets)) % kServers;
        report.view.results.push_back(
            ProbeResult{target, 0, 4321, kNow - 58'000, kNow - 58'000, ProbeFailure::none});
      }
      std::ranges::sort(report.view.results, {}, &ProbeResult::target);
      const KeyPair key = generate_key_pair();
      records.push_back(encode_signed_record(RecordKind::report, "s-" + std::to_string(origin),
                                             1'700'000, kNow, encode_report_payload(report, kNow),
                                             key.secret_key));
    }
  }
};

// Copies the fixture's records into `frame` after room for the header.
void fill_frame(const Fixture& f, Bytes& frame) {
  frame.resize(kFrameHeaderBytesMax);
  for (const Bytes& record : f.records) frame.insert(frame.end(), record.begin(), record.end());
}

// The receiver's work: open the frame, then check every record in place.
void open_and_check(const Fixture& f, LinkCrypto& receiver, const Bytes& frame, Bytes& plaintext) {
  auto header = parse_frame_header(frame);
  MESH_CHECK(header.ok(), "header");
  MESH_CHECK(receiver.open_into(f.a.public_key, *header, frame, plaintext).ok(), "open");
  std::size_t offset = 0;
  for (std::uint32_t i = 0; i < f.records.size(); ++i) {
    const ByteView raw(plaintext.data() + offset, f.records[i].size());
    offset += raw.size();
    auto envelope = decode_envelope_view(raw);
    MESH_CHECK(envelope.ok(), "envelope");
    auto valid = validate_report_payload(envelope->payload, f.roster, i, envelope->timestamp_ms);
    MESH_CHECK(valid.ok(), "payload");
  }
}

void set_counters(benchmark::State& state) {
  const double records = static_cast<double>(state.iterations()) * kRecordsPerFrame;
  state.counters["ns_per_record"] =
      benchmark::Counter(records * 1e-9, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["s_per_sim_hour_n1000"] = benchmark::Counter(
      records / kDeliveriesPerSimHour, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_DeliveryFloor(benchmark::State& state) {
  static const Fixture f;
  LinkCrypto sender(f.a.secret_key, 1);
  LinkCrypto receiver(f.b.secret_key, 1);
  Bytes frame;
  Bytes plaintext;
  for (auto _ : state) {
    fill_frame(f, frame);
    MESH_CHECK(sender.seal_in_place(f.b.public_key, frame).ok(), "seal");
    open_and_check(f, receiver, frame, plaintext);
  }
  set_counters(state);
  state.counters["frame_bytes"] = static_cast<double>(frame.size());
  state.counters["record_bytes"] = static_cast<double>(f.records[0].size());
}
BENCHMARK(BM_DeliveryFloor);

// The same without the seal: what a receiver alone pays, the floor even of a
// design that sealed each record once for the whole fleet instead of once
// per link. Frames are sealed in batches outside the timed region (the
// receiver's replay window takes each nonce once).
void BM_DeliveryFloorOpenOnly(benchmark::State& state) {
  static const Fixture f;
  constexpr std::size_t kBatch = 1024;
  LinkCrypto sender(f.a.secret_key, 1);
  LinkCrypto receiver(f.b.secret_key, 1);
  std::vector<Bytes> frames(kBatch);
  const auto seal_batch = [&] {
    for (Bytes& frame : frames) {
      fill_frame(f, frame);
      MESH_CHECK(sender.seal_in_place(f.b.public_key, frame).ok(), "seal");
    }
  };
  seal_batch();
  Bytes plaintext;
  std::size_t next = 0;
  for (auto _ : state) {
    if (next == kBatch) {
      state.PauseTiming();
      seal_batch();
      next = 0;
      state.ResumeTiming();
    }
    open_and_check(f, receiver, frames[next++], plaintext);
  }
  set_counters(state);
}
BENCHMARK(BM_DeliveryFloorOpenOnly);

}  // namespace

BENCHMARK_MAIN();
