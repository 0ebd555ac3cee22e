#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz (preset fuzz: clang, ASan, UBSan)
# and runs each in turn for a set time, at the lowest CPU priority. Prints
# per target: executions, exec/s, edges covered (libFuzzer's cov:), corpus
# size and findings. Exits 1 on any finding (crash, leak, timeout, OOM,
# sanitizer report, broken property); the input is kept under
# build/fuzz/findings/<target>/ (tests/fuzz/README.md: make it a regression).
#
#   scripts/fuzz.sh [--ci] [--runs N] [TARGET...]
#     FUZZ_SECONDS  seconds per target (default 180; --ci: 30)
#     FUZZ_JOBS     build parallelism (default 2)
#     FUZZ_PARALLEL targets run at once (default 1; --ci: one per core)
#     --ci          start from the committed corpus only (a fresh scratch
#                   corpus each time): a short regression check for .ci/run
#     --runs N      stop a target after N executions instead (the long run;
#                   FUZZ_SECONDS then only caps it)
#
# New inputs go to build/fuzz/corpus/<target>/ (kept between runs of
# `make fuzz`), never into the repository; tests/fuzz/README.md says how to
# merge them into tests/fuzz/corpus/.
set -euo pipefail
cd "$(dirname "$0")/.."

ci=0
runs=0
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --ci) ci=1 ;;
    --runs) runs="$2"; shift ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1") ;;
  esac
  shift
done
if [ "$ci" = 1 ]; then seconds="${FUZZ_SECONDS:-30}"; else seconds="${FUZZ_SECONDS:-180}"; fi
# Targets run side by side: one per core in --ci (the machine does nothing
# else then), one at a time otherwise (the long run shares the machine).
if [ "$ci" = 1 ]; then parallel="${FUZZ_PARALLEL:-$(nproc)}"; else parallel="${FUZZ_PARALLEL:-1}"; fi
[ "$runs" != 0 ] && [ -z "${FUZZ_SECONDS:-}" ] && seconds=3600
all=(envelope roster_payload report_payload frame roster_toml node_config scenario api_request server_hello)
[ ${#targets[@]} -eq 0 ] && targets=("${all[@]}")

build=build/fuzz
src=tests/fuzz
[ -f "$build/build.ninja" ] || nice -n 19 cmake --preset fuzz >/dev/null
nice -n 19 cmake --build "$build" -j "${FUZZ_JOBS:-2}" --target meshnode_fuzzers

dict_of() {
  case "$1" in
    envelope|roster_payload|report_payload|frame) echo "-dict=$src/msgpack.dict" ;;
    api_request) echo "-dict=$src/http.dict" ;;
    roster_toml|node_config|scenario) echo "-dict=$src/toml.dict" ;;
  esac
}

# The last value of `key: N` in libFuzzer's status lines, or stat::key.
last_field() { grep -oE "$1: ?[0-9]+" "$2" | tail -1 | grep -oE '[0-9]+$' || echo 0; }
stat_of() { grep -E "^stat::$1:" "$2" | tail -1 | awk '{print $2}' || true; }

# One target: runs it and leaves its table row in $build/logs/<target>.row.
run_target() {
  local t=$1
  local bin="$build/tests/fuzz/${t}_fuzz" corpus findings log status=0 regressions=() limit
  if [ "$ci" = 1 ]; then
    corpus="$build/ci-corpus/$t"
    rm -rf "$corpus"
  else
    corpus="$build/corpus/$t"
  fi
  findings="$build/findings/$t"
  log="$build/logs/$t.log"
  mkdir -p "$corpus" "$findings" "$(dirname "$log")"
  [ -d "$src/regressions/$t" ] && regressions=("$src/regressions/$t")
  limit=(-max_total_time="$seconds")
  [ "$runs" != 0 ] && limit+=(-runs="$runs")
  # shellcheck disable=SC2046
  nice -n 19 "$bin" "${limit[@]}" -rss_limit_mb=2048 -timeout=25 -print_final_stats=1 \
    -artifact_prefix="$findings/" $(dict_of "$t") \
    "$corpus" "$src/corpus/$t" "${regressions[@]}" >"$log" 2>&1 || status=$?
  local execs rate edges size result=none
  execs=$(stat_of number_of_executed_units "$log")
  rate=$(stat_of average_exec_per_sec "$log")
  edges=$(last_field cov "$log")
  size=$(last_field corp "$log")
  if [ "$status" != 0 ] || grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:|fuzz property broken' "$log"; then
    result="FOUND (exit $status): $(ls -t "$findings" | head -1) — see $log"
  fi
  printf '%-15s %12s %8s %7s %8s %s\n' "$t" "${execs:-?}" "${rate:-?}" "$edges" "$size" "$result" \
    >"$build/logs/$t.row"
  cat "$build/logs/$t.row"
}

for t in "${targets[@]}"; do
  [ -x "$build/tests/fuzz/${t}_fuzz" ] || { echo "fuzz.sh: no such target: $t" >&2; exit 2; }
done
mkdir -p "$build/logs"
printf '%-15s %12s %8s %7s %8s %s\n' target executions exec/s edges corpus findings
# Up to $parallel targets at once (each is one process running one input at
# a time); rows print as targets end.
for t in "${targets[@]}"; do
  rm -f "$build/logs/$t.row"
  while [ "$(jobs -rp | wc -l)" -ge "$parallel" ]; do wait -n || true; done
  run_target "$t" &
done
wait

found=0
for t in "${targets[@]}"; do
  row="$build/logs/$t.row"
  if [ ! -f "$row" ]; then
    echo "$t: no result (the script failed while running it; see $build/logs/$t.log)"
    found=1
  elif grep -q 'FOUND' "$row"; then
    found=1
  fi
done
exit "$found"
