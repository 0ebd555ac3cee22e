// Verdict engine benchmarks: the full evaluation (from scratch, and the
// Evaluator's rebuild from the view digests it holds, as the daemon does
// it) and the incremental path (one upsert + evaluate) at 100, 1000 and
// 3000 servers with full-mesh
// views (witnesses_per_country = 0: every observer probes every other),
// about 2% of entries failing; and the floor under a full evaluation (one
// pass reading the views). Figures: README.md, docs/VERDICTS.md and
// docs/PERFORMANCE.md.
#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <vector>

#include "verdict/engine.h"
#include "verdict/witnesses.h"

using namespace mesh;
using namespace mesh::verdict;

namespace {

constexpr UnixMs kNow = 1'700'000'000'000;

Roster full_mesh_roster(std::uint32_t servers) {
  Roster roster;
  roster.version = 3;
  roster.params.witnesses_per_country = 0;
  const char* countries[] = {"DE", "FI", "NL", "RU", "US"};
  roster.routes.push_back(Route{"all", "all"});
  for (std::uint32_t i = 0; i < servers; ++i) {
    ServerEntry server;
    server.id = "s-" + std::to_string(i);
    server.country = countries[i % 5];
    server.routes = {"all"};
    roster.servers.push_back(std::move(server));
  }
  return roster;
}

ObservedReport full_view(std::uint32_t origin, std::uint32_t servers, UnixMs at,
                         std::mt19937_64& rng) {
  ObservedReport observed;
  observed.origin = origin;
  observed.timestamp_ms = at;
  observed.report.view.roster_version = 3;
  observed.report.view.results.reserve(servers);
  for (std::uint32_t t = 0; t < servers; ++t) {
    if (t == origin) continue;
    ProbeResult result;
    result.target = t;
    result.last_probe_ms = at - 10'000;
    if (rng() % 50 == 0) {  // ~2% failing
      result.fail_streak = 3 + static_cast<std::uint32_t>(rng() % 4);
      result.reason = ProbeFailure::tcp_timeout;
    } else {
      result.ok_streak = 10;
      result.last_ok_ms = result.last_probe_ms;
    }
    observed.report.view.results.push_back(result);
  }
  return observed;
}

std::vector<ObservedReport> fleet_reports(std::uint32_t servers, std::mt19937_64& rng) {
  std::vector<ObservedReport> reports;
  reports.reserve(servers);
  for (std::uint32_t o = 0; o < servers; ++o) {
    reports.push_back(full_view(o, servers, kNow - 20'000 - o, rng));
  }
  return reports;
}

void BM_FullEvaluation(benchmark::State& state) {
  auto servers = static_cast<std::uint32_t>(state.range(0));
  std::mt19937_64 rng(42);
  Roster roster = full_mesh_roster(servers);
  std::vector<ObservedReport> reports = fleet_reports(servers, rng);
  for (auto _ : state) {
    Evaluation evaluation = evaluate(roster, reports, kNow);
    benchmark::DoNotOptimize(evaluation);
  }
  state.counters["probe_results"] = static_cast<double>(servers) * (servers - 1);
}

// The floor under a full evaluation: one pass that only reads, from every
// result of every view, the fields the tally reads. At 3000 servers the
// views hold 9 M results of 48 bytes (432 MB, far beyond any cache), so
// this pass is bound by memory bandwidth, not by the engine's arithmetic.
void BM_ReadViews(benchmark::State& state) {
  auto servers = static_cast<std::uint32_t>(state.range(0));
  std::mt19937_64 rng(42);
  std::vector<ObservedReport> reports = fleet_reports(servers, rng);
  for (auto _ : state) {
    std::uint64_t sum = 0;
    for (const ObservedReport& report : reports) {
      for (const ProbeResult& result : report.report.view.results) {
        sum += result.target + result.fail_streak + (result.last_probe_ms > kNow) + result.recovered +
               (result.unanswered_since_ms != 0);
      }
    }
    benchmark::DoNotOptimize(sum);
  }
}

// An Evaluator holding every report of a full-mesh fleet of `servers`.
Evaluator holding_fleet(const Roster& roster, std::uint32_t servers, std::mt19937_64& rng) {
  Evaluator evaluator(roster);
  for (ObservedReport& report : fleet_reports(servers, rng)) evaluator.upsert(std::move(report));
  return evaluator;
}

// The full evaluation as a daemon meets it: its Evaluator rebuilds the
// tally from the reports it holds (each digested once, when it arrived)
// whenever the epoch or its grace window changes. Each iteration
// evaluates on the other side of the grace window's end, so each is a
// rebuild.
void BM_EvaluatorRebuild(benchmark::State& state) {
  auto servers = static_cast<std::uint32_t>(state.range(0));
  std::mt19937_64 rng(42);
  Roster roster = full_mesh_roster(servers);
  Evaluator evaluator = holding_fleet(roster, servers, rng);
  const std::size_t n = roster.servers.size();
  const UnixMs in_grace = epoch_start_ms(epoch_of(kNow, roster.params, n), roster.params, n) + 60'000;
  if (!in_grace_after_switch(in_grace, roster.params, n) || in_grace_after_switch(kNow, roster.params, n)) {
    state.SkipWithError("the two evaluation times are not either side of the grace window's end");
    return;
  }
  bool grace = false;
  for (auto _ : state) {
    Evaluation evaluation = evaluator.evaluate(grace ? in_grace : kNow);
    benchmark::DoNotOptimize(evaluation);
    grace = !grace;
  }
}

void BM_IncrementalUpsertEvaluate(benchmark::State& state) {
  auto servers = static_cast<std::uint32_t>(state.range(0));
  std::mt19937_64 rng(42);
  Roster roster = full_mesh_roster(servers);
  Evaluator evaluator = holding_fleet(roster, servers, rng);
  benchmark::DoNotOptimize(evaluator.evaluate(kNow));
  // Fresh reports prepared outside the timed loop; each iteration upserts one.
  std::vector<ObservedReport> next;
  for (std::uint32_t i = 0; i < 64; ++i) next.push_back(full_view(i % servers, servers, kNow, rng));
  UnixMs at = kNow;
  std::size_t i = 0;
  for (auto _ : state) {
    state.PauseTiming();
    ObservedReport report = next[i++ % next.size()];
    report.timestamp_ms = ++at;
    state.ResumeTiming();
    evaluator.upsert(std::move(report));
    Evaluation evaluation = evaluator.evaluate(at);
    benchmark::DoNotOptimize(evaluation);
  }
}

}  // namespace

BENCHMARK(BM_FullEvaluation)->Arg(100)->Arg(1000)->Arg(3000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EvaluatorRebuild)->Arg(100)->Arg(1000)->Arg(3000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ReadViews)->Arg(100)->Arg(1000)->Arg(3000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_IncrementalUpsertEvaluate)->Arg(100)->Arg(1000)->Arg(3000)->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
