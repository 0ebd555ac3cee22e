#!/usr/bin/env bash
# Installs the Debian 12 packages meshnode needs to build and test, only the
# ones that are missing. Uses apt-get directly as root, through sudo otherwise.
# `install-deps.sh bench` adds what `make bench` needs besides (wrk, nginx,
# serf);
# `install-deps.sh fuzz` what `make fuzz` needs (clang and its libFuzzer and
# sanitizer runtimes).
set -euo pipefail

packages=(
  g++ cmake ninja-build pkg-config make
  libboost-dev libboost-system-dev
  libmsgpack-cxx-dev libsodium-dev liblmdb-dev
  libspdlog-dev libfmt-dev doctest-dev nlohmann-json3-dev libtomlplusplus-dev libcli11-dev
  libbenchmark-dev libssl-dev time nftables bc
  iproute2  # tests/e2e: network namespaces, veth pairs and a bridge
  prometheus  # promtool: tests check /metrics with it
  chromium  # tests/browser: the status page in a real browser
  # make package and tests/package: dpkg-shlibdeps computes the package's
  # Depends; lintian checks it; systemd-analyze verifies its unit; the
  # maintainer scripts run adduser and deb-systemd-helper.
  dpkg-dev lintian systemd adduser init-system-helpers
)
# tests/browser also needs Node.js 18+ and npm. A Node.js from elsewhere is
# kept (NodeSource's nodejs bundles npm and conflicts with Debian's npm
# package): Debian's are added only when the commands are missing.
command -v node >/dev/null 2>&1 || packages+=(nodejs)
command -v npm >/dev/null 2>&1 || packages+=(npm)
# bench/api_bench.sh: wrk against the API and against nginx serving the same JSON.
# bench/serf_compare.sh: HashiCorp Serf beside meshnode, curl and python3 to read both.
[ "${1:-}" = bench ] && packages+=(wrk nginx-light serf curl python3)
# tests/fuzz: clang++-14 with -fsanitize=fuzzer,address,undefined. The
# libFuzzer and sanitizer runtimes clang links are in libclang-rt-14-dev;
# libfuzzer-14-dev is the standalone libFuzzer.a the issue names.
[ "${1:-}" = fuzz ] && packages+=(clang-14 libclang-rt-14-dev libfuzzer-14-dev)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "meshnode: installing missing packages: ${missing[*]}"
if [ "$(id -u)" -eq 0 ]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1; then
  as_root=(sudo)  # may ask for a password when run from a terminal
else
  echo "meshnode: cannot install packages: not root and sudo is not available." >&2
  echo "meshnode: install them by hand: apt-get install ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
if ! "${as_root[@]}" apt-get update -qq || ! "${as_root[@]}" apt-get install -y -qq "${missing[@]}"; then
  echo "meshnode: apt-get failed; install by hand: apt-get install ${missing[*]}" >&2
  exit 1
fi
