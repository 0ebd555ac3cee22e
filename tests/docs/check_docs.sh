#!/usr/bin/env bash
# The operator's documents keep their shape (ctest docs_check):
# - README.md is a front page: under 200 lines, docs/OPERATING.md linked at
#   its top, the two commands, the install pointer, a short figures table
#   pointing to docs/PERFORMANCE.md, the layout, and no dated measurement
#   (those live in docs/PERFORMANCE.md, current, and bench/README.md,
#   history);
# - docs/OPERATING.md and docs/PERFORMANCE.md hold the sections their
#   readers look for;
# - every relative link in these documents and bench/README.md names a file
#   that exists;
# - bench/results/ holds exactly what docs/PERFORMANCE.md and
#   bench/README.md cite.
# Prints every breach and exits 1; exits 0 when there is none.
set -euo pipefail
cd "${1:-$(dirname "$0")/../..}"

status=0
breach() { echo "docs check: $*" >&2; status=1; }

# has FILE TEXT: FILE holds the line TEXT exactly (a heading, say).
has() {
  [ -f "$1" ] || { breach "$1 is missing"; return; }
  grep -qxF -- "$2" "$1" || breach "$1 lacks the line '$2'"
}

lines=$(wc -l <README.md)
[ "$lines" -le 200 ] || breach "README.md has $lines lines (at most 200: it is the front page)"
head -n 15 README.md | grep -q '(docs/OPERATING.md)' || breach "README.md does not link docs/OPERATING.md in its first 15 lines"
if dated=$(grep -nE '20[0-9]{2}-[01][0-9]-[0-3][0-9]' README.md); then
  breach "README.md holds dated measurements (move them to docs/PERFORMANCE.md or bench/README.md):"$'\n'"$dated"
fi
for line in '## Set-up: two commands (fresh Debian 12)' '## Install on a fleet' '## Headline figures' \
            '## End-to-end fault suite' '## Layout'; do
  has README.md "$line"
done
for command in 'make demo' 'make test' 'make package'; do
  grep -q "^$command" README.md || breach "README.md does not show '$command' as a command"
done
grep -q '(docs/PERFORMANCE.md)' README.md || breach "README.md does not link docs/PERFORMANCE.md"

for line in '## Install' '## Per-server checklist' '## The operator key' '## A node key lost or compromised' \
            '## Roster updates' '## HTTPS for the API' '## Upgrades' '## Backups: what the data dir holds' \
            '## Status and rotation' '## Small fleets: what they can and cannot see'; do
  has docs/OPERATING.md "$line"
done
for line in '## Method' '## Beside Serf' '## meshsim at N = 100 and 1000' '## Detection times' \
            '## Verdict engine' '## The daemon and its API' '## End-to-end fault suite' '## CI time'; do
  has docs/PERFORMANCE.md "$line"
done

# Relative links: [text](path) and [text](path#anchor), from each file's folder.
for doc in README.md docs/OPERATING.md docs/PERFORMANCE.md bench/README.md; do
  [ -f "$doc" ] || { breach "$doc is missing"; continue; }
  dir=$(dirname "$doc")
  while IFS= read -r target; do
    path=${target%%#*}
    [ -n "$path" ] || continue
    [ -e "$dir/$path" ] || breach "$doc links '$target', which does not exist"
  done < <(grep -oE '\]\([^)[:space:]]+\)' "$doc" | sed -E 's/^\]\((.*)\)$/\1/' | grep -vE '^(https?|mailto):' || true)
done

# bench/results: every file cited, every citation a file.
cited=$(cat docs/PERFORMANCE.md bench/README.md 2>/dev/null || true)
for file in bench/results/*; do
  grep -qF "$(basename "$file")" <<<"$cited" || breach "$file is cited by neither docs/PERFORMANCE.md nor bench/README.md"
done
while IFS= read -r path; do
  [ -e "$path" ] || breach "bench/results file '$path' is cited but missing"
done < <(grep -ohE 'bench/results/[A-Za-z0-9._-]+' docs/PERFORMANCE.md bench/README.md 2>/dev/null | sort -u)

[ $status -eq 0 ] && echo "docs check: README, OPERATING, PERFORMANCE and bench/results hold together"
exit $status
