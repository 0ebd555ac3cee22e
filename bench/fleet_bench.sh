#!/usr/bin/env bash
# The daemon's own cost, measured on a real fleet on loopback (README,
# "Figures"): N meshnode processes (default 30, in 5 countries) with real
# TLS stand-in listeners and services, at the roster's DEFAULT parameters
# (probes every 60 s, reports on change with 5-minute heartbeats, 3 witnesses
# per country taking turns at one TLS probe of a target every interval,
# up to the HelloRetryRequest).
# After a warm-up, it samples every daemon's CPU time (utime + stime from
# /proc/PID/stat) over a window and its RSS at the end, then stops them all
# (SIGTERM flushes the exact volume account) and reads each node's account
# of bytes on the wire with meshctl mesh. Prints medians and maxima.
#
#   bench/fleet_bench.sh [BUILD_DIR] [NODES] [WARMUP_S] [WINDOW_S]
set -euo pipefail
build=${1:-build/release}
nodes=${2:-30}
warmup=${3:-180}
window=${4:-300}
meshctl=$build/tools/meshctl/meshctl
meshnode=$build/node/meshnode
standin=$build/tools/standin/meshnode-standin
work=$(mktemp -d /tmp/meshnode-fleet-bench-XXXXXX)
countries=(DE NL FR GB US)
gossip_port=4716
listener_port=8443
addr() { echo "127.0.3.$(( $1 + 1 ))"; }

pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT

operator_pub=$("$meshctl" keygen --out "$work/operator.key")
echo "read $(head -c 32 /dev/urandom | sha256sum | cut -d' ' -f1)" > "$work/api-tokens"  # the API runs, nobody calls it
{
  echo "version = 1"
  echo '[[routes]]'
  echo 'id = "all"'
  echo 'name = "All"'
  for ((i = 0; i < nodes; i++)); do
    mkdir -p "$work/n$i/data" && chmod 700 "$work/n$i/data"
    pub=$("$meshctl" keygen --out "$work/n$i/node.key")
    echo '[[servers]]'
    echo "id = \"n$i\""
    echo "country = \"${countries[$((i % 5))]}\""
    echo "probe = \"$(addr $i):$listener_port\""
    echo "sni = \"www.n$i.bench.example\""
    echo "gossip = \"$(addr $i):$gossip_port\""
    echo "key = \"$pub\""
    echo 'routes = ["all"]'
  done
} > "$work/roster.toml"
"$meshctl" roster sign --key "$work/operator.key" --out "$work/roster.signed" "$work/roster.toml"
daemons=()
for ((i = 0; i < nodes; i++)); do
  cat > "$work/n$i/meshnode.toml" <<TOML
node_id = "n$i"
key_file = "$work/n$i/node.key"
operator_key = "$operator_pub"
data_dir = "$work/n$i/data"
roster_file = "$work/roster.signed"
[gossip]
listen = "$(addr $i):$gossip_port"
source_address = "$(addr $i)"
[probe]
source_address = "$(addr $i)"
[self_check]
service = "process:vpn-b$i"
[api]
listen = "$(addr $i):4717"
token_file = "$work/api-tokens"
TOML
  "$standin" listen --address "$(addr $i):$listener_port" > "$work/n$i/standin.log" 2>&1 &
  pids+=($!)
  "$standin" service --name "vpn-b$i" >> "$work/n$i/standin.log" 2>&1 &
  pids+=($!)
done
for ((i = 0; i < nodes; i++)); do
  "$meshnode" --config "$work/n$i/meshnode.toml" > "$work/n$i/meshnode.log" 2>&1 &
  daemons+=($!)
  pids+=($!)
done
started=$(date +%s%N)
ticks=$(getconf CLK_TCK)
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

echo "fleet: $nodes daemons on 127.0.3.x, default parameters; warm-up ${warmup}s, window ${window}s ($work)"
sleep "$warmup"
declare -a cpu_start
for i in "${!daemons[@]}"; do cpu_start[$i]=$(cpu_ticks "${daemons[$i]}"); done
sleep "$window"
cpu=()
rss=()
anon=()
for i in "${!daemons[@]}"; do
  end=$(cpu_ticks "${daemons[$i]}")
  cpu+=("$(echo "scale=4; ($end - ${cpu_start[$i]}) / $ticks / ($window / 60)" | bc)")
  rss+=("$(awk '/^VmRSS/ { print $2 }' "/proc/${daemons[$i]}/status")")
  anon+=("$(awk '/^RssAnon/ { print $2 }' "/proc/${daemons[$i]}/status")")
done
for pid in "${daemons[@]}"; do kill -TERM "$pid"; done
for pid in "${daemons[@]}"; do wait "$pid" || true; done
ran_s=$(echo "scale=3; ($(date +%s%N) - $started) / 1000000000" | bc)
charged=()
received=()
for ((i = 0; i < nodes; i++)); do
  json=$("$meshctl" mesh --json --data "$work/n$i/data")
  charged+=("$(echo "$json" | awk -F': ' '/"used_today"/ { gsub(/,/, "", $2); print $2 }')")
  received+=("$(echo "$json" | awk -F': ' '/"received_bytes"/ { gsub(/,/, "", $2); print $2 }')")
done
median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
maximum() { printf '%s\n' "$@" | sort -g | tail -1; }
per_day() { echo "scale=1; $1 * 86400 / $ran_s / 1000000" | bc; }
ok=$(grep -l "verdict: n" "$work"/n*/meshnode.log | wc -l)
echo "daemons that logged verdicts: $ok of $nodes"
echo "CPU s per minute per daemon:  median $(median "${cpu[@]}")  max $(maximum "${cpu[@]}")"
echo "RSS per daemon (MiB):         median $(echo "scale=1; $(median "${rss[@]}") / 1024" | bc)  max $(echo "scale=1; $(maximum "${rss[@]}") / 1024" | bc)"
echo "  of which anonymous (heap, stacks; the rest is shared library and program pages): median $(echo "scale=1; $(median "${anon[@]}") / 1024" | bc) MiB"
echo "wire bytes per node per day (volume account, probes + gossip sent; over the whole ${ran_s}s run, start-up included):"
echo "  charged: median $(per_day "$(median "${charged[@]}")") MB  max $(per_day "$(maximum "${charged[@]}")") MB"
echo "  gossip received (charged to its senders): median $(per_day "$(median "${received[@]}")") MB"
rm -rf "$work"
