#!/usr/bin/env bash
# Time from a block to its verdict at every node, over the phases a block
# can fall at (README, "Figures"; issue 13's 4- and 10-minute targets).
#
# The built-ins block at 5m, one phase of the probe schedule: an SNI block
# there meets a TLS probe about 2 minutes later, where another start time
# waits up to 7 probe intervals (docs/PROTOCOL.md, "Probes"). This writes one
# meshsim scenario file per start time, 5m00s + k * STEP_S for k = 0 ..
# STARTS - 1 (53 s apart, so the starts walk across the 60 s probe interval
# and the 7-interval TLS cycle), N = 100 in 5 countries: the last country
# (US) blocks de-1 and de-2, with port = "sni" (a reset after the
# ClientHello) and port = "all" (an IP block). Each file expects both
# servers unreachable at every checked node 12 minutes after its start and
# no false verdict; meshsim prints the time to verdict, and this prints
# min / median / max per kind.
#
#   bench/detection_sweep.sh [BUILD_DIR]      (STARTS=16 STEP_S=53 SEED=1)
set -euo pipefail
build=${1:-build/release}
starts=${STARTS:-16}
step=${STEP_S:-53}
seed=${SEED:-1}
meshsim=$build/tools/meshsim/meshsim
work=$(mktemp -d /tmp/meshnode-detection-sweep-XXXXXX)
trap 'rm -rf "$work"' EXIT

scenario() {  # kind port start_s
  local at=$(($3 + 720))
  cat <<EOF
name = "$1-from-${3}s"
seed = $seed
duration = "$(($3 + 780))s"
[fleet]
nodes = 100
countries = 5
[sim]
check_interval = "30s"
[[event]]
at = "${3}s"
kind = "block"
name = "sweep"
servers = ["de-1", "de-2"]
from = ["US"]
port = "$2"
EOF
  for server in de-1 de-2; do
    printf '[[expect]]\nkind = "status"\nserver = "%s"\nstatus = "unreachable"\nat = "%ss"\nsince = "%ss"\n' \
      "$server" "$at" "$3"
  done
  printf '[[expect]]\nkind = "no_false_verdicts"\n'
}

# "after 3m7s" -> 187
to_seconds() {
  sed -E 's/^([0-9]+)m$/\1m0s/; s/^([0-9]+)s$/0m\1s/' | awk -Fm '{sub(/s$/, "", $2); print $1 * 60 + $2}'
}

status=0
for kind in sni ip; do
  port=$([ "$kind" = sni ] && echo sni || echo all)
  : > "$work/$kind.times"
  failed=0
  for k in $(seq 0 $((starts - 1))); do
    start=$((300 + k * step))
    file=$work/$kind-$k.toml
    scenario "$kind" "$port" "$start" > "$file"
    out=$("$meshsim" --scenario-file "$file" 2>&1) || failed=$((failed + 1))
    grep -oE 'unreachable at [0-9ms]+: after [0-9ms]+' <<< "$out" | sed 's/.*after //' | to_seconds >> "$work/$kind.times"
  done
  [ "$failed" -eq 0 ] || status=1
  sort -n "$work/$kind.times" | awk -v kind="$kind" -v n="$starts" -v failed="$failed" '
    { t[NR] = $1 }
    END {
      m = (NR % 2) ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2
      printf "%-3s block, %d start times x 2 servers, %d verdicts reached: time to verdict at every node min %dm%02ds, median %dm%02ds, max %dm%02ds; scenario files failing: %d\n",
        kind, n, NR, t[1] / 60, t[1] % 60, m / 60, m % 60, t[NR] / 60, t[NR] % 60, failed
    }'
done
exit "$status"
