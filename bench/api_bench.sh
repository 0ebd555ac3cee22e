#!/usr/bin/env bash
# The panel API under load, side by side with nginx in the same run
# (docs/API.md; README, "Figures"): one meshnode holding a roster of N
# servers (default 100; the others are absent, so they show no_data: the
# bodies have the size of a 100-server fleet's), and nginx serving the very
# same JSON bodies, fetched from the node, as static files (sendfile on, as
# Debian's nginx.conf has it; checked to answer 200 with the node's very
# bytes, and every run stops at a non-2xx answer). wrk, 50
# connections, 2 threads, DURATION seconds per run, each endpoint, ROUNDS
# (default 3) rounds of meshnode then nginx; prints requests per second and
# p99 of every run, the server's and wrk's CPU time per request, and the
# medians of the rounds' meshnode / nginx ratios: in requests per second
# (wrk shares the cores, so its own cost per request counts too), and in
# requests per second of server CPU (what the server itself costs).
# API_THREADS sets the node's [api] threads (default 2).
#
#   bench/api_bench.sh [BUILD_DIR] [SERVERS] [DURATION_S]
set -euo pipefail
build=${1:-build/release}
servers=${2:-100}
duration=${3:-10}
rounds=${ROUNDS:-3}
meshctl=$build/tools/meshctl/meshctl
meshnode=$build/node/meshnode
work=$(mktemp -d /tmp/meshnode-api-bench-XXXXXX)
address=127.0.4.1
api_port=4717
nginx_port=4790
for tool in wrk nginx; do
  command -v "$tool" >/dev/null || { echo "api_bench: $tool is not installed (apt-get install wrk nginx-light)" >&2; exit 1; }
done
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

token=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
echo "read $(printf %s "$token" | sha256sum | cut -d' ' -f1)" > "$work/api-tokens"
operator_pub=$("$meshctl" keygen --out "$work/operator.key")
countries=(DE NL FR GB US RU TR IR CN AE SG JP FI PL KZ)
{
  echo "version = 1"
  for r in eu asia; do printf '[[routes]]\nid = "%s"\nname = "%s"\n' "$r" "$r"; done
  for ((i = 0; i < servers; i++)); do
    if (( i == 0 )); then pub=$("$meshctl" keygen --out "$work/node.key"); else pub=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n'); fi
    route=eu; (( i % 2 )) && route=asia
    printf '[[servers]]\nid = "s%d"\ncountry = "%s"\nprobe = "127.0.5.%d:443"\nsni = "s%d.example.com"\n' \
      "$i" "${countries[$((i % 15))]}" "$(( i % 250 + 1 ))" "$i"
    printf 'gossip = "127.0.5.%d:4716"\nkey = "%s"\nroutes = ["%s"]\n' "$(( i % 250 + 1 ))" "$pub" "$route"
  done
} > "$work/roster.toml"
"$meshctl" roster sign --key "$work/operator.key" --out "$work/roster.signed" "$work/roster.toml" > /dev/null
mkdir -m 700 "$work/data"
cat > "$work/meshnode.toml" <<TOML
node_id = "s0"
key_file = "$work/node.key"
operator_key = "$operator_pub"
data_dir = "$work/data"
roster_file = "$work/roster.signed"
[gossip]
listen = "$address:4716"
[api]
listen = "$address:$api_port"
token_file = "$work/api-tokens"
threads = ${API_THREADS:-2}
TOML
"$meshnode" --config "$work/meshnode.toml" > "$work/meshnode.log" 2>&1 &
pids+=($!)

# The same bodies for nginx, fetched from the node once it has verdicts.
mkdir -p "$work/www/v1"
fetch() {  # fetch PATH FILE: one GET through bash's /dev/tcp, body only
  exec 3<>"/dev/tcp/$address/$api_port"
  printf 'GET %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nConnection: close\r\n\r\n' "$1" "$token" >&3
  sed '1,/^\r$/d' <&3 > "$2"
  exec 3<&-
}
for ((t = 0; t < 60; t++)); do
  fetch /v1/routes "$work/www/v1/routes" 2>/dev/null || true
  grep -q '"servers"' "$work/www/v1/routes" 2>/dev/null && break
  sleep 1
done
fetch /v1/servers "$work/www/v1/servers"
cat > "$work/nginx.conf" <<NGINX
worker_processes auto;
pid $work/nginx.pid;
error_log $work/nginx-error.log;
events { worker_connections 1024; }
http {
  access_log off;
  default_type application/json;
  sendfile on;     # as in Debian's nginx.conf; nginx's own default is off
  tcp_nopush on;
  server { listen $address:$nginx_port; root $work/www; }
}
NGINX
# nginx's workers drop to an unprivileged user when started as root: they
# must be able to reach the files (mktemp made the work dir 0700).
chmod 711 "$work"
chmod -R a+rX "$work/www"
nginx -c "$work/nginx.conf"
# Both servers must answer 200 with the very same bytes, or the comparison
# measures an error page.
for path in /v1/routes /v1/servers; do
  exec 3<>"/dev/tcp/$address/$nginx_port"
  printf 'GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n' "$path" >&3
  cat <&3 > "$work/check"
  exec 3<&-
  status=$(head -1 "$work/check" | cut -d' ' -f2)
  sed -i '1,/^\r$/d' "$work/check"
  if [ "$status" != 200 ] || ! cmp -s "$work/check" "$work/www$path"; then
    echo "api_bench: nginx answers $path with $status, not the node's body" >&2; exit 1
  fi
done

hz=$(getconf CLK_TCK)
ticks() {  # the CPU ticks (user + system) of the processes PIDS...
  local sum=0 pid
  for pid in "$@"; do sum=$(( sum + $(awk '{ print $14 + $15 }' "/proc/$pid/stat") )); done
  echo "$sum"
}
# run NAME URL HEADER PIDS...: one wrk run; prints its line to stderr and
# "req/s server-us-per-request" to stdout (PIDS: the server's processes).
run() {
  local name=$1 url=$2 header=$3; shift 3
  local before after out
  before=$(ticks "$@")
  out=$(/usr/bin/time -f "wrk-cpu %U %S" wrk -t2 -c50 -d"${duration}s" --latency ${header:+-H "$header"} "$url" 2>&1)
  after=$(ticks "$@")
  local rps p99 wrk_cpu server_us wrk_us
  if echo "$out" | grep -q 'Non-2xx'; then
    echo "api_bench: $name answered with errors:" >&2; echo "$out" >&2; exit 1
  fi
  rps=$(echo "$out" | awk '/Requests\/sec/ { print $2 }')
  p99=$(echo "$out" | awk '$1 == "99%" { print $2 }')
  wrk_cpu=$(echo "$out" | awk '$1 == "wrk-cpu" { print $2 + $3 }')
  server_us=$(echo "scale=1; ($after - $before) * 1000000 / $hz / ($rps * $duration)" | bc)
  wrk_us=$(echo "scale=1; $wrk_cpu * 1000000 / ($rps * $duration)" | bc)
  printf '%-28s %10s req/s   p99 %-8s CPU per request: server %5s us, wrk %5s us\n' \
    "$name" "$rps" "$p99" "$server_us" "$wrk_us" >&2
  echo "$rps $server_us"
}
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
nginx_workers=$(pgrep -P "$(cat "$work/nginx.pid")" | tr '\n' ' ')
echo "api bench: $servers servers in the roster, wrk -t2 -c50 -d${duration}s, $rounds rounds interleaved; /v1/routes $(wc -c < "$work/www/v1/routes") B, /v1/servers $(wc -c < "$work/www/v1/servers") B"
for path in /v1/routes /v1/servers; do
  ratios=() cpu_ratios=()
  for ((round = 1; round <= rounds; round++)); do
    read -r ours ours_us < <(run "meshnode $path" "http://$address:$api_port$path" "Authorization: Bearer $token" "${pids[0]}")
    # shellcheck disable=SC2086
    read -r theirs theirs_us < <(run "nginx    $path (static)" "http://$address:$nginx_port$path" "" $nginx_workers)
    ratios+=("$(echo "scale=2; $ours / $theirs" | bc)")
    cpu_ratios+=("$(echo "scale=2; $theirs_us / $ours_us" | bc)")
  done
  echo "  $path: meshnode / nginx = $(printf '%s\n' "${ratios[@]}" | median) in requests per second (median of ${ratios[*]});" \
    "$(printf '%s\n' "${cpu_ratios[@]}" | median) in requests per server CPU second (median of ${cpu_ratios[*]})"
done
