#!/usr/bin/env bash
# make demo: a real meshnode fleet on this machine, no root needed.
#
# Six meshnode daemons on loopback addresses 127.0.0.11..16 (each with its
# own key, data dir and config), in three "countries" of two, sharing one
# signed roster with two routes. Each server has a real TLS listener
# standing in for its VPN (meshnode-standin listen) and a stand-in VPN
# service process (meshnode-standin service). Then, one at a time, and each
# healing by itself:
#   1. steady state: every server ok on every node;
#   2. n3's VPN service stops: "Server unavailable", out of rotation;
#   3. n5's daemon stops: "No data from server", still in rotation;
#   4. country NL blocks n1: "Unreachable from your servers", NL 2/2. As
#      root with nftables, NL's packets to and from n1 are dropped for real
#      (probes time out); otherwise n1's stand-in listener resets NL's
#      connections after the TLS ClientHello (a DPI-style block).
# Everything shown is read with meshctl from the daemons' own stores (and once
# from a node's panel API): what they computed, not what this script expects. Short intervals come from the
# roster (3 s heartbeats and probes) so the whole run takes about a minute.
set -euo pipefail
build=${1:-build/release}
meshctl=$build/tools/meshctl/meshctl
meshnode=$build/node/meshnode
standin=$build/tools/standin/meshnode-standin
demo=$build/demo
for tool in "$meshctl" "$meshnode" "$standin"; do
  [ -x "$tool" ] || { echo "demo: $tool is missing (run make build)" >&2; exit 1; }
done
rm -rf "$demo" && mkdir -p "$demo"
demo=$(cd "$demo" && pwd)

ids=(n1 n2 n3 n4 n5 n6)
countries=(DE DE NL NL FI FI)
listener_port=8443
gossip_port=4716
addr() { echo "127.0.0.$((10 + ${1#n}))"; }

pids=()
nft_table=""
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [ -n "$nft_table" ] && nft delete table inet "$nft_table" 2>/dev/null || true
}
trap cleanup EXIT

say() { printf '\n== %s\n' "$*"; }
started=$(date +%s)
elapsed() { echo "$(( $(date +%s) - started ))s"; }

# status NODE SERVER: what NODE's daemon computed for SERVER.
status() { "$meshctl" status --data "$demo/$1/data" 2>/dev/null | awk -v s="$2" '$1 == s { print $3 }'; }
# rotation NODE ROUTE: the servers NODE's daemon has in rotation on ROUTE
# (from the JSON of `meshctl routes`: keys in order, servers last).
rotation() {
  "$meshctl" routes --data "$demo/$1/data" --json 2>/dev/null | tr -d ' \n' |
    sed -n "s/.*\"id\":\"$2\"[^]]*\"servers\":\[\([^]]*\)\].*/\1/p" | tr -d '"' | sed 's/,/, /g'
}
# every NODES... -- SERVER STATUS: each node shows SERVER with STATUS.
every() {
  local server=${*: -2:1} want=${*: -1} node
  for node in "${@:1:$#-2}"; do [ "$(status "$node" "$server")" = "$want" ] || return 1; done
}
# wait_for SECONDS WHAT COMMAND...: polls once a second; on timeout shows
# what the nodes computed and fails the demo.
wait_for() {
  local limit=$1 what=$2; shift 2
  for ((t = 0; t < limit; t++)); do
    if "$@"; then echo "   ($what after ${t}s; demo clock $(elapsed))"; return 0; fi
    sleep 1
  done
  echo "demo: FAILED waiting for: $what (${limit}s)" >&2
  "$meshctl" status --data "$demo/n2/data" >&2 || true
  echo "demo: logs are in $demo/*/meshnode.log" >&2
  exit 1
}
show() { echo "-- as node $1 sees it:"; "$meshctl" status --data "$demo/$1/data" | sed 's/^/   /'; }
all_ok() {
  local node server
  for node in "$@"; do
    for server in "${ids[@]}"; do [ "$(status "$node" "$server")" = ok ] || return 1; done
  done
}

say "Keys, roster and configs for 6 nodes in $demo"
operator_pub=$("$meshctl" keygen --out "$demo/operator.key")
# One read token for the panel API of every node; the token file holds only
# its SHA-256 (docs/API.md; `meshctl token new` does the same for operators).
api_token=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
echo "read $(printf %s "$api_token" | sha256sum | cut -d' ' -f1)" > "$demo/api-tokens"
echo "$api_token" > "$demo/panel.token" && chmod 600 "$demo/panel.token"
{
  echo "version = 1"
  echo
  echo "[params]"
  echo "heartbeat_interval_ms = 3000   # demo: a heartbeat every 3 s (default 5 min; changes at once)"
  echo "probe_interval_ms = 3000"
  echo "stale_after_ms = 9000"
  echo "fail_streak = 3"
  echo "quorum_witnesses = 2        # two servers of one country make a block visible"
  echo "volume_bytes_per_day_max = 8589934592  # demo: a day of 3 s TLS probes fits (default 200 MiB paces them)"
  echo
  echo '[[routes]]'
  echo 'id = "all"'
  echo 'name = "Every server"'
  echo
  echo '[[routes]]'
  echo 'id = "fast"'
  echo 'name = "One per country"'
  for i in "${!ids[@]}"; do
    id=${ids[$i]}
    mkdir -p "$demo/$id/data" && chmod 700 "$demo/$id/data"
    pub=$("$meshctl" keygen --out "$demo/$id/node.key")
    routes='["all"]'
    (( i % 2 == 0 )) && routes='["all", "fast"]'
    echo
    echo '[[servers]]'
    echo "id = \"$id\""
    echo "country = \"${countries[$i]}\""
    echo "probe = \"$(addr "$id"):$listener_port\""
    echo "sni = \"www.$id.demo.example\""
    echo "gossip = \"$(addr "$id"):$gossip_port\""
    echo "key = \"$pub\""
    echo "routes = $routes"
  done
} > "$demo/roster.toml"
"$meshctl" roster sign --key "$demo/operator.key" --out "$demo/roster.signed" "$demo/roster.toml"
for id in "${ids[@]}"; do
  cat > "$demo/$id/meshnode.toml" <<TOML
node_id = "$id"
key_file = "$demo/$id/node.key"
operator_key = "$operator_pub"
data_dir = "$demo/$id/data"
roster_file = "$demo/roster.signed"

[gossip]
listen = "$(addr "$id"):$gossip_port"
source_address = "$(addr "$id")"

[probe]
tls_every = 1            # demo: a country makes a TLS probe of each target every interval (default: every 5th)
connect_timeout_ms = 4000
tls_timeout_ms = 4000
source_address = "$(addr "$id")"

[self_check]
service = "process:vpn-$id"

[api]
listen = "$(addr "$id"):4717"
token_file = "$demo/api-tokens"
TOML
  "$meshnode" --check-config "$demo/$id/meshnode.toml" > /dev/null
done
echo "operator key $operator_pub; roster: $demo/roster.toml (signed: roster.signed)"

say "Starting 6 stand-in VPN listeners and services, then 6 meshnode daemons"
start_node() {
  "$meshnode" --config "$demo/$1/meshnode.toml" >> "$demo/$1/meshnode.log" 2>&1 &
  eval "daemon_$1=$!"
  pids+=($!)
}
start_service() {
  "$standin" service --name "vpn-$1" --pid-file "$demo/$1/vpn.pid" >> "$demo/$1/standin.log" 2>&1 &
  pids+=($!)
}
for id in "${ids[@]}"; do
  touch "$demo/$id/block"
  "$standin" listen --address "$(addr "$id"):$listener_port" --block-file "$demo/$id/block" \
    >> "$demo/$id/standin.log" 2>&1 &
  pids+=($!)
  start_service "$id"
done
for id in "${ids[@]}"; do start_node "$id"; done
echo "While the demo runs, every node serves its panel API and status page:"
echo "  http://$(addr n1):4717/ .. http://$(addr n6):4717/  (token: $demo/panel.token)"

say "1. Steady state: every server ok at every node"
wait_for 60 "every node sees every server ok" all_ok "${ids[@]}"
show n2
show n6

say "2. n3's VPN service stops"
kill "$(cat "$demo/n3/vpn.pid")"
wait_for 40 "every other node shows n3 unavailable" every n1 n2 n4 n5 n6 n3 unavailable
show n1
echo "-- route 'fast' at n6: $(rotation n6 fast)"
start_service n3
wait_for 40 "n3 ok again everywhere" every "${ids[@]}" n3 ok

say "3. n5's daemon stops (its VPN listener keeps working)"
kill -TERM "$daemon_n5"
wait_for 40 "the other nodes show n5 as no_data" every n1 n2 n3 n4 n6 n5 no_data
show n4
echo "-- route 'fast' at n1: $(rotation n1 fast)   (silence alone removes nothing)"
start_node n5
wait_for 40 "n5 ok again everywhere" every "${ids[@]}" n5 ok

say "4. Country NL (n3, n4) blocks n1"
if [ "$(id -u)" -eq 0 ] && command -v nft >/dev/null 2>&1; then
  nft_table=meshnode_demo
  nft add table inet $nft_table
  nft add chain inet $nft_table input '{ type filter hook input priority 0; policy accept; }'
  nft add rule inet $nft_table input ip saddr '{ 127.0.0.13, 127.0.0.14 }' ip daddr 127.0.0.11 drop
  nft add rule inet $nft_table input ip saddr 127.0.0.11 ip daddr '{ 127.0.0.13, 127.0.0.14 }' drop
  echo "(root: nftables drops every packet between NL's servers and n1: probes time out)"
else
  printf 'reset 127.0.0.13\nreset 127.0.0.14\n' > "$demo/n1/block"
  echo "(not root: n1's stand-in listener resets NL's connections after the ClientHello)"
fi
wait_for 60 "every node shows n1 unreachable" every "${ids[@]}" n1 unreachable
show n5
echo "-- n1 from n5's panel API: meshctl server n1 --api http://$(addr n5):4717 --token-file panel.token"
"$meshctl" server n1 --api "http://$(addr n5):4717" --token-file "$demo/panel.token" --no-color | sed 's/^/   /'
echo "-- route 'fast' at n2: $(rotation n2 fast)"
if [ -n "$nft_table" ]; then
  nft delete table inet $nft_table
  nft_table=""
else
  : > "$demo/n1/block"
fi
wait_for 60 "n1 ok again everywhere" every "${ids[@]}" n1 ok
show n3

say "What the daemons logged (node n2: one line per transition, never one per probe)"
grep -E ' (verdict|route):' "$demo/n2/meshnode.log" | sed 's/^/   /' | tail -20

cleanup
trap - EXIT
say "Done in $(elapsed): every fleet process stopped"
cat <<MSG
- Data dirs, configs, keys and logs: $demo/n1 .. n6 (meshnode.log, standin.log)
- Look again any time: $meshctl status --data $demo/n2/data
- The simulator runs the same node agent on a virtual network: $build/tools/meshsim/meshsim --help
MSG
