#!/usr/bin/env bash
# make demo: the most real thing meshnode runs today.
#
# The meshnode daemon (real sockets, probes, self-checks) is the next piece of
# work and does not exist yet, so this demo does not pretend to run one. It
# runs, for real:
#   1. the operator's workflow with meshctl: operator and node keys, a roster
#      for 5 loopback nodes written in TOML, signed, checked and shown;
#   2. the simulator, meshsim, which drives the real gossip core and the real
#      verdict engine for every node on a virtual network: a country blocks
#      two servers, and every node's verdicts converge on "unreachable".
set -euo pipefail
build=${1:-build/release}
meshctl=$build/tools/meshctl/meshctl
meshsim=$build/tools/meshsim/meshsim
demo=$build/demo
rm -rf "$demo" && mkdir -p "$demo/keys"

say() { printf '\n== %s\n' "$*"; }

say "1. Operator workflow (meshctl, real keys and a real signed roster) in $demo"
operator_pub=$("$meshctl" keygen --out "$demo/keys/operator.key")
echo "operator public key: $operator_pub"
{
  echo "version = 1"
  echo
  echo "[[routes]]"
  echo 'id = "europe"'
  echo 'name = "Europe"'
  echo
  echo "[[routes]]"
  echo 'id = "asia"'
  echo 'name = "Asia"'
  countries=(DE NL FR SG JP)
  routes=(europe europe europe asia asia)
  for i in 1 2 3 4 5; do
    pub=$("$meshctl" keygen --out "$demo/keys/node$i.key")
    echo
    echo "[[servers]]"
    echo "id = \"node$i\""
    echo "country = \"${countries[$((i-1))]}\""
    echo "probe = \"127.0.0.$i:443\""
    echo "sni = \"node$i.demo.example\""
    echo "gossip = \"127.0.0.1:$((7945 + i))\""
    echo "key = \"$pub\""
    echo "routes = [\"${routes[$((i-1))]}\"]"
  done
} > "$demo/roster.toml"
"$meshctl" roster sign --key "$demo/keys/operator.key" --out "$demo/roster.signed" "$demo/roster.toml"
"$meshctl" roster show --file "$demo/roster.signed" --operator-key "$operator_pub" | head -20
echo "(full roster: $meshctl roster show --file $demo/roster.signed --operator-key $operator_pub)"

say "2. The simulator: 60 nodes in 6 countries, RU blocks two servers from 5m to 20m (virtual time, seed 7)"
"$meshsim" --nodes 60 --countries 6 --scenario country-block --seed 7

say "What you just saw"
cat <<MSG
- meshctl made real Ed25519 keys (mode 0600) and a signed roster record: $demo
- meshsim ran the real gossip core and verdict engine of every node; same seed, same run.
  Try: $meshsim --help, or another scenario (lossy, unreliable-witness, partition-heal).
- The daemon on real sockets, its panel API and status page come next (see README, Roadmap).
MSG
