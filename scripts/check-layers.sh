#!/usr/bin/env bash
# The pure layers stay pure (README, "Layout": sans-IO cores). verdict/, gossip/ and the node agent (node/agent/)
# must not include sockets, LMDB, OpenSSL, clocks, OS randomness or threads,
# nor the layers that wrap them. Prints every offending line and exits 1;
# exits 0 when the layers are clean. Run by ctest (layers_check).
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"

pure_dirs=(verdict gossip node/agent node/rotation)
# Headers a pure layer must not include.
forbidden_includes='#[[:space:]]*include[[:space:]]*[<"](boost/asio|boost/beast|asio\.hpp|asio/|lmdb\.h|openssl/|chrono|random|thread|mutex|condition_variable|future|ctime|time\.h|sys/|unistd\.h|fcntl\.h|netinet/|arpa/|spdlog/|storage/|node/daemon|node/net|tools/)'
# Calls that read a clock or the OS's randomness.
forbidden_calls='(system_clock|steady_clock|high_resolution_clock|random_device|clock_gettime|gettimeofday|[^_a-z]rand\(|[^_a-z]srand\(|[^_a-z.>]time\(nullptr\)|getenv\(|randombytes_)'

status=0
for dir in "${pure_dirs[@]}"; do
  [ -d "$dir" ] || continue
  if hits=$(grep -rnE "$forbidden_includes" "$dir" --include='*.h' --include='*.cc'); then
    echo "layer check: $dir includes what a pure layer must not:" >&2
    echo "$hits" >&2
    status=1
  fi
  if hits=$(grep -rnE "$forbidden_calls" "$dir" --include='*.h' --include='*.cc' | grep -vE '^[^:]+:[0-9]+:[[:space:]]*//'); then
    echo "layer check: $dir reads a clock, the environment or OS randomness:" >&2
    echo "$hits" >&2
    status=1
  fi
  # CMake: a pure layer links none of the IO libraries.
  if [ -f "$dir/CMakeLists.txt" ] && hits=$(grep -vE '^[[:space:]]*#' "$dir/CMakeLists.txt" | grep -nE 'Boost::|OpenSSL::|LMDB|meshnode_storage|spdlog|Threads::'); then
    echo "layer check: $dir/CMakeLists.txt links what a pure layer must not:" >&2
    echo "$hits" >&2
    status=1
  fi
done
[ $status -eq 0 ] && echo "layer check: ${pure_dirs[*]} are pure (no sockets, LMDB, OpenSSL, clocks, OS randomness, threads)"
exit $status
