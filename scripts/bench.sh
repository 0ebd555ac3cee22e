#!/usr/bin/env bash
# make bench: the figures quoted in the README, measured on this machine.
# Google Benchmark programs print medians of 3 repetitions; meshsim prints
# the gossip targets (dissemination rounds, duplicate factor, bytes against
# the floor) and its own wall time.
set -euo pipefail
build=${1:-build/release}

run_bench() {
  "$build/bench/$1" --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
    --benchmark_display_aggregates_only=true 2>&1 | grep -E "^(Benchmark|-|BM_).*(median|Benchmark|---)"
}

echo "== verdict engine (bench/verdict_bench)"
run_bench verdict_bench
echo
echo "== record decoding (bench/record_bench)"
run_bench record_bench
for n in 100 1000; do
  echo
  echo "== meshsim: $n nodes, 15 countries, lossy links, 1 simulated hour"
  /usr/bin/time -f "wall %es, peak RSS %MKB" \
    "$build/tools/meshsim/meshsim" --nodes "$n" --countries 15 --scenario lossy --duration 1h \
    --seed 1 --timing
done
