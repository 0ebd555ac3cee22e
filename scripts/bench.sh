#!/usr/bin/env bash
# make bench: the figures quoted in the README, measured on this machine.
# Google Benchmark programs print medians of 3 repetitions; meshsim prints
# the gossip targets (dissemination rounds, duplicate factor, bytes against
# the floor) and its own wall time.
set -euo pipefail
build=${1:-build/release}

run_bench() {
  "$build/bench/$1" --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
    --benchmark_display_aggregates_only=true 2>/dev/null | grep -E "^(Benchmark|BM_.*_median)"
}

echo "== verdict engine (bench/verdict_bench)"
run_bench verdict_bench
echo
echo "== record decoding (bench/record_bench)"
run_bench record_bench
echo
echo "== link crypto per frame (bench/link_bench)"
run_bench link_bench
echo
echo "== one record delivery, its least work with per-link sealing (bench/delivery_bench)"
run_bench delivery_bench
sim() {
  echo
  echo "== meshsim $*"
  /usr/bin/time -f "wall %es, user %Us, peak RSS %MKB" \
    "$build/tools/meshsim/meshsim" --seed 1 --timing "$@" || true
}
# The README's table of gossip and probes per node per day: how each term
# grows with N and with countries (issue 13).
for countries in 5 10 20; do
  sim --scenario dissemination --nodes 100 --countries "$countries" --duration 1h
done
sim --scenario dissemination --nodes 1000 --countries 15 --duration 1h   # the 60 s target, about a minute of CPU
sim --scenario dissemination --nodes 1000 --countries 20 --duration 1h
sim --scenario dissemination --nodes 1000 --countries 30 --duration 1h
sim --scenario dissemination --nodes 3000 --countries 20 --duration 15m  # about 8 minutes, 5 GiB
sim --scenario lossy --nodes 100 --countries 15 --duration 1h
sim --scenario unreliable-witness   # its own fleet: at 15 countries it would need 60 nodes
echo
echo "== time to the verdict on an IP block, an SNI block and a stopped agent, over 16 start times (bench/detection_sweep.sh, ~1 min)"
bench/detection_sweep.sh "$build" || true
echo
echo "== the panel API under wrk, side by side with nginx serving the same JSON (bench/api_bench.sh)"
bench/api_bench.sh "$build" 100 10
echo
echo "== the daemon on a real fleet: 30 meshnode processes on loopback, default parameters (bench/fleet_bench.sh, ~9 min)"
bench/fleet_bench.sh "$build" 30 180 300
echo
echo "== meshnode beside HashiCorp Serf: N = 10, 50, 100 on loopback, bytes from nftables counters, medians of RUNS (5) fresh fleets (bench/serf_compare.py, ~4 h; RUNS=1 ~80 min; needs root)"
RUNS=${RUNS:-5} WARMUP_S=${WARMUP_S:-120} WINDOW_S=${WINDOW_S:-300} STARTS=${STARTS:-10} BLOCK_S=${BLOCK_S:-240} \
  OUT=${OUT:-serf-compare.json} python3 bench/serf_compare.py "$build" 10 50 100
