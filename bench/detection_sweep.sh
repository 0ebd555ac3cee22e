#!/usr/bin/env bash
# Time from a fault to its verdict at every node, over the phases a fault
# can fall at (docs/PERFORMANCE.md, "Detection times"; issue 37's targets).
#
# The built-ins start their faults at 5m, one phase of the probe and report
# schedules; where a fault falls against them decides how long it waits
# (for an SNI block, its country's next TLS turn: docs/PROTOCOL.md,
# "Probes"). This writes one meshsim scenario file per fault and start time,
# 5m00s + k * STEP_S for k = 0 .. STARTS - 1 (53 s apart, so the starts walk
# across the 60 s probe interval and its TLS turns, and the 5-minute
# heartbeat grid), N = NODES in COUNTRIES (100 in 5 by default, the
# roster's default parameters), for five faults of two servers of the first
# country (de-1, de-2): the last country blocks them with port = "all" (ip:
# an IP block) and port = "sni" (sni: a reset after the ClientHello); they
# are powered off (off); their VPN service stops (service); their agents
# stop (stop, `no_data`). Each file expects the verdict on both servers at
# every other checked node WINDOW_S after its start (stop: 14 minutes) and
# no false verdict; verdicts are evaluated every CHECK_S seconds, so each
# time is rounded up to a check (1 s by default, as a daemon evaluates on
# its 1 s tick once a report changed; 5 s until 2026-12-06). meshsim's JSON gives each time to verdict;
# this prints p50 / p99 (nearest rank) / max per fault and the probe bytes
# per node and day. Exits 1 when a file failed, or when a time is over the
# fault's limit in LIMITS (seconds, e.g. "ip=60 off=60 sni=150 service=30
# stop=900"; ctest `sim_detection_sweep` runs it so).
#
#   bench/detection_sweep.sh [BUILD_DIR]
#     (STARTS=16 STEP_S=53 SEED=1 NODES=100 COUNTRIES=5 CHECK_S=1 WINDOW_S=300
#      FAULTS="ip sni off service stop" LIMITS= MESHSIM=BUILD_DIR/tools/meshsim/meshsim)
set -euo pipefail
build=${1:-build/release}
starts=${STARTS:-16}
step=${STEP_S:-53}
seed=${SEED:-1}
nodes=${NODES:-100}
countries=${COUNTRIES:-5}
check=${CHECK_S:-1}
window=${WINDOW_S:-300}
faults=${FAULTS:-ip sni off service stop}
limits=${LIMITS:-}
for pair in "STARTS:$starts" "CHECK_S:$check" "WINDOW_S:$window" "NODES:$nodes" "COUNTRIES:$countries"; do
  name=${pair%%:*} value=${pair#*:}
  if [[ ! $value =~ ^[0-9]+$ ]] || ((10#$value < 1)); then
    echo "detection_sweep: $name must be a whole number >= 1, got '$value'" >&2
    exit 2
  fi
done
meshsim=${MESHSIM:-$build/tools/meshsim/meshsim}
work=$(mktemp -d /tmp/meshnode-detection-sweep-XXXXXX)
trap 'rm -rf "$work"' EXIT

scenario() {  # fault start_s
  local status=unreachable wait=$window
  case $1 in
    sni | stop) wait=840 ;;  # a TLS turn; a stopped agent's last report going stale
  esac
  printf 'name = "%s-from-%ss"\nseed = %s\nduration = "%ss"\n' "$1" "$2" "$seed" $(($2 + wait + 60))
  printf '[fleet]\nnodes = %s\ncountries = %s\n[sim]\ncheck_interval = "%ss"\n' "$nodes" "$countries" "$check"
  # The daily volume cap sized for the fleet, as the built-ins do (an
  # operator must: docs/CONFIG.md, "Daily volume cap"): 2 MiB per server,
  # at least the default 200 MiB.
  printf '[params]\nvolume_bytes_per_day_max = %s\n' $((nodes * 2097152 > 209715200 ? nodes * 2097152 : 209715200))
  printf '[[event]]\nat = "%ss"\n' "$2"
  case $1 in
    sni | ip)
      printf 'kind = "block"\nname = "sweep"\nservers = ["de-1", "de-2"]\nfrom = ["%s"]\nport = "%s"\n' \
        "$last_country" "$([ "$1" = sni ] && echo sni || echo all)" ;;
    off) printf 'kind = "node_down"\nservers = ["de-1", "de-2"]\n' ;;
    service)
      status=unavailable
      printf 'kind = "service_down"\nservers = ["de-1", "de-2"]\n' ;;
    stop)
      status=no_data
      printf 'kind = "stop_agent"\nservers = ["de-1", "de-2"]\n' ;;
    *) echo "detection_sweep: unknown fault '$1' (ip sni off service stop)" >&2; exit 2 ;;
  esac
  for server in de-1 de-2; do
    printf '[[expect]]\nkind = "status"\nserver = "%s"\nstatus = "%s"\nat = "%ss"\nsince = "%ss"\nexclude_server = true\n' \
      "$server" "$status" $(($2 + wait)) "$2"
  done
  printf '[[expect]]\nkind = "no_false_verdicts"\n'
}

# The generated fleet's countries, in order (kGeneratedCountries,
# tools/meshsim/fleet_gen.h): the last one blocks.
generated=(DE NL FR GB US RU TR IR CN AE SG JP FI PL KZ SE CA BR IN AU)
if ((10#$countries > ${#generated[@]})); then
  echo "detection_sweep: COUNTRIES must be at most ${#generated[@]}, got '$countries'" >&2
  exit 2
fi
last_country=${generated[$((10#$countries - 1))]}

status=0
for fault in $faults; do
  : > "$work/$fault.times"
  : > "$work/$fault.bytes"
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
    grep -A3 '"probe_bytes_per_node_day"' <<< "$out" | grep -oE '"mean": *[0-9.]+' | grep -oE '[0-9.]+$' \
      >> "$work/$fault.bytes" || true
  done
  [ "$failed" -eq 0 ] || status=1
  limit=$(tr ' ' '\n' <<< "$limits" | sed -n "s/^$fault=//p")
  bytes=$(sort -n "$work/$fault.bytes" | awk '{ b[NR] = $1 } END { if (NR) printf "%.1f", b[int((NR + 1) / 2)] / 1e6; else printf "-" }')
  sort -n "$work/$fault.times" | awk -v fault="$fault" -v n="$starts" -v failed="$failed" -v limit="$limit" \
      -v size="$nodes/$countries" -v bytes="$bytes" '
    function mmss(s) { return sprintf("%dm%02ds", s / 60, s % 60) }
    { t[NR] = $1 }
    END {
      if (NR == 0) { printf "%-7s N = %s: no verdict reached in %d runs\n", fault, size, n; exit 1 }
      p50 = t[int((NR + 1) / 2)]
      p99 = t[int((99 * NR + 99) / 100)]
      printf "%-7s N = %s, %d start times x 2 servers, %d verdicts: at every node p50 %s, p99 %s, max %s (min %s); probe MB/node/day %s; scenario files failing: %d\n",
        fault, size, n, NR, mmss(p50), mmss(p99), mmss(t[NR]), mmss(t[1]), bytes, failed
      if (limit != "" && (NR < 2 * n || t[NR] > limit)) {
        printf "%-7s OVER THE LIMIT of %d s: %d of %d verdicts reached, the slowest after %d s\n", fault, limit, NR, 2 * n, t[NR]
        exit 1
      }
    }' || status=1
done
exit "$status"
