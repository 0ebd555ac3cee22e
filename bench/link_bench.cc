// Link crypto benchmarks: sealing and opening one gossip frame
// (gossip/link.h: XChaCha20-Poly1305 under crypto_kx session keys, in
// place). Every frame a simulated node sends is sealed once and opened
// once, so these figures are most of meshsim's floor (bench/delivery_bench
// adds the record checks): at N = 1000 the fleet exchanges ~230 K frames of
// ~1.4 KB per simulated minute (docs/SIMULATOR.md, "Performance").
// Figures: bench/README.md.
#include <benchmark/benchmark.h>

#include "common/check.h"
#include "gossip/link.h"
#include "record/keys.h"

using namespace mesh;
using namespace mesh::gossip;

namespace {

struct Pair {
  KeyPair a = generate_key_pair();
  KeyPair b = generate_key_pair();
  LinkCrypto sender{a.secret_key, 1};
  LinkCrypto receiver{b.secret_key, 1};
};

void BM_SealInPlace(benchmark::State& state) {
  Pair pair;
  const auto size = static_cast<std::size_t>(state.range(0));
  Bytes frame;
  for (auto _ : state) {
    frame.assign(kFrameHeaderBytesMax + size, 0x5a);
    MESH_CHECK(pair.sender.seal_in_place(pair.b.public_key, frame).ok(), "seal");
    benchmark::DoNotOptimize(frame.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * size));
}
BENCHMARK(BM_SealInPlace)->ArgName("plaintext_bytes")->Arg(256)->Arg(1400)->Arg(16 * 1024);

// What each frame costs the simulator: sealed by one node, opened by another.
void BM_SealAndOpen(benchmark::State& state) {
  Pair pair;
  const auto size = static_cast<std::size_t>(state.range(0));
  Bytes frame;
  Bytes plaintext;
  for (auto _ : state) {
    frame.assign(kFrameHeaderBytesMax + size, 0x5a);
    MESH_CHECK(pair.sender.seal_in_place(pair.b.public_key, frame).ok(), "seal");
    auto header = parse_frame_header(frame);
    MESH_CHECK(header.ok(), "header");
    MESH_CHECK(pair.receiver.open_into(pair.a.public_key, *header, frame, plaintext).ok(), "open");
    benchmark::DoNotOptimize(plaintext.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * size));
}
BENCHMARK(BM_SealAndOpen)->ArgName("plaintext_bytes")->Arg(256)->Arg(1400)->Arg(16 * 1024);

}  // namespace

BENCHMARK_MAIN();
