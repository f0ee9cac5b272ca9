#!/usr/bin/env bash
# Checks the direction of the dependency graph with `bazel query`:
#   1. no target under //server/... depends (directly or not) on a target
#      under //agent/... (what both use lives in common/);
#   2. no shipped binary depends on a target under //tests/... (the binaries
#      are those deploy/package.sh builds).
# Prints each offending edge ("from -> to") and one path that reaches it
# from the checked targets.
#
# Usage: tests/style/check_deps.sh
# Exit 0 when the graph holds, 1 when an arrow points the wrong way, 2 when
# bazel or the query fails.
set -uo pipefail
cd "$(dirname "$0")/../.."

bazel=${BAZEL:-bazel}
if ! command -v "$bazel" >/dev/null 2>&1; then
  echo "deps: $bazel not found" >&2
  exit 2
fi

# The shipped binaries: the targets=(...) line of deploy/package.sh.
shipped=$(sed -n 's/^targets=(\(.*\))$/\1/p' deploy/package.sh)
if [[ -z $shipped ]]; then
  echo "deps: no targets=(...) line in deploy/package.sh" >&2
  exit 2
fi

err=$(mktemp)
trap 'rm -f "$err"' EXIT
query() {
  "$bazel" query --keep_going=false --noshow_progress "$1" 2>"$err" ||
    { cat "$err" >&2; return 2; }
}

bad=0
# check NAME FROM FORBIDDEN: fails when deps(FROM) reaches FORBIDDEN.
check() {
  local name=$1 from=$2 forbidden=$3
  local reached edges
  reached=$(query "deps($from) intersect ($forbidden)") || exit 2
  if [[ -z $reached ]]; then
    echo "deps: $name: none"
    return
  fi
  bad=$((bad + 1))
  # The edges into the forbidden set from outside it, within what FROM reaches.
  local set="deps($from) intersect ($forbidden)"
  edges=$(query "rdeps(deps($from), $set, 1) - ($forbidden)") || exit 2
  for src in $edges; do
    for dst in $(query "deps($src, 1) intersect ($set)") ; do
      [[ $dst == "$src" ]] && continue
      echo "deps: $name: $src -> $dst"
      echo "deps:   path: $(query "somepath($from, $dst)" | paste -sd' ' | sed 's/ / -> /g')"
    done
  done
}

start=$(date +%s)
check "server depends on agent" "//server/..." "//agent/..."
check "shipped binary depends on tests" "set($shipped)" "//tests/..."
echo "deps: 2 rules checked, $bad broken, $(( $(date +%s) - start )) s"
[[ $bad -eq 0 ]]
