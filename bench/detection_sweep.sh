#!/usr/bin/env bash
# Time from a fault to its verdict at every node, over the phases a fault
# can fall at (docs/PERFORMANCE.md, "Detection times"; issue 13's 4-, 10- and 15-minute targets).
#
# The built-ins start their faults at 5m, one phase of the probe and report
# schedules; where an SNI block falls against its country's TLS turns (one
# every 5 probe intervals, docs/PROTOCOL.md, "Probes") decides how long it
# waits for its first TLS probe. This writes one meshsim scenario file per start time, 5m00s +
# k * STEP_S for k = 0 .. STARTS - 1 (53 s apart, so the starts walk across
# the 60 s probe interval, the 5-minute TLS turns and the 5-minute
# heartbeat grid), N = 100 in 5 countries, for three faults of de-1 and
# de-2: the last country (US) blocks them with port = "sni" (a reset after
# the ClientHello) and with port = "all" (an IP block); and their agents
# stop (`no_data`). Each file expects the verdict on both servers at every
# other checked node 14 minutes after its start and no false verdict;
# meshsim's JSON gives each time to verdict, and this prints min / median / max
# per fault. Exits 1 when a file failed, or when a time is over the fault's
# limit in LIMITS ("sni=600 ip=240 stop=900" holds issue 13's targets, in
# seconds; ctest `sim_detection_sweep` runs it so).
#
#   bench/detection_sweep.sh [BUILD_DIR]      (STARTS=16 STEP_S=53 SEED=1 LIMITS=)
set -euo pipefail
build=${1:-build/release}
starts=${STARTS:-16}
step=${STEP_S:-53}
seed=${SEED:-1}
limits=${LIMITS:-}
if [[ ! $starts =~ ^[0-9]+$ ]] || ((10#$starts < 1)); then
  echo "detection_sweep: STARTS must be a whole number >= 1, got '$starts'" >&2
  exit 2
fi
meshsim=$build/tools/meshsim/meshsim
work=$(mktemp -d /tmp/meshnode-detection-sweep-XXXXXX)
trap 'rm -rf "$work"' EXIT

scenario() {  # fault start_s
  local status=unreachable
  printf 'name = "%s-from-%ss"\nseed = %s\nduration = "%ss"\n' "$1" "$2" "$seed" $(($2 + 900))
  printf '[fleet]\nnodes = 100\ncountries = 5\n[sim]\ncheck_interval = "30s"\n'
  printf '[[event]]\nat = "%ss"\n' "$2"
  case $1 in
    sni | ip)
      printf 'kind = "block"\nname = "sweep"\nservers = ["de-1", "de-2"]\nfrom = ["US"]\nport = "%s"\n' \
        "$([ "$1" = sni ] && echo sni || echo all)" ;;
    stop)
      status=no_data
      printf 'kind = "stop_agent"\nservers = ["de-1", "de-2"]\n' ;;
  esac
  for server in de-1 de-2; do
    printf '[[expect]]\nkind = "status"\nserver = "%s"\nstatus = "%s"\nat = "%ss"\nsince = "%ss"\nexclude_server = true\n' \
      "$server" "$status" $(($2 + 840)) "$2"
  done
  printf '[[expect]]\nkind = "no_false_verdicts"\n'
}

status=0
for fault in sni ip stop; do
  : > "$work/$fault.times"
  failed=0
  for k in $(seq 0 $((starts - 1))); do
    start=$((300 + k * step))
    file=$work/$fault-$k.toml
    scenario "$fault" "$start" > "$file"
    # Each status expectation met carries its time to verdict, time_ms
    # (docs/SIMULATOR.md, "Output"); one not met carries none.
    out=$("$meshsim" --scenario-file "$file" --json 2>/dev/null) || failed=$((failed + 1))
    grep -oE '"time_ms": *[0-9]+' <<< "$out" | grep -oE '[0-9]+$' | awk '{ print int($1 / 1000) }' \
      >> "$work/$fault.times" || true
  done
  [ "$failed" -eq 0 ] || status=1
  limit=$(tr ' ' '\n' <<< "$limits" | sed -n "s/^$fault=//p")
  sort -n "$work/$fault.times" | awk -v fault="$fault" -v n="$starts" -v failed="$failed" -v limit="$limit" '
    { t[NR] = $1 }
    END {
      m = (NR % 2) ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2
      printf "%-4s %d start times x 2 servers, %d verdicts reached: time to verdict at every node min %dm%02ds, median %dm%02ds, max %dm%02ds; scenario files failing: %d\n",
        fault, n, NR, t[1] / 60, t[1] % 60, m / 60, m % 60, t[NR] / 60, t[NR] % 60, failed
      if (limit != "" && (NR < 2 * n || t[NR] > limit)) {
        printf "%-4s OVER THE LIMIT of %d s: %d of %d verdicts reached, the slowest after %d s\n", fault, limit, NR, 2 * n, t[NR]
        exit 1
      }
    }' || status=1
done
exit "$status"
