# Sourced first by the tests in this directory, as
#   test_name=NAME; . "$(dirname "$0")/common.sh" "$@"
# with OUT (the directory deploy/package.sh wrote) as the first argument.
# Sets repo, here (this directory), out, version (deploy/debian/changelog's)
# and fixture (the host tree both tests run the agent on), exits unless root,
# and gives:
#   pass NAME              prints PASS NAME
#   flunk NAME [DETAIL]    prints FAIL NAME and DETAIL indented; the test fails
#   finish                 prints the verdict and exits 0 or 1
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
here="$repo/tests/packaging"
if [[ $# -lt 1 || ! -d $1 ]]; then echo "usage: $0 OUT (the directory deploy/package.sh wrote)" >&2; exit 2; fi
out=$(realpath "$1")
version=$(dpkg-parsechangelog -l "$repo/deploy/debian/changelog" -S Version)
fixture="$repo/tests/fixtures/hosts/preempt-none-6.16-240k"
if [[ $(id -u) -ne 0 ]]; then echo "$test_name: needs root" >&2; exit 1; fi

# On SIGINT/SIGTERM, exit once the running command is done, so that the
# test's EXIT trap cleans up after it (and not beside a running dpkg).
trap 'exit 130' INT
trap 'exit 143' TERM

fail=0
pass() { echo "PASS $1"; }
flunk() {
  echo "FAIL $1"
  if [[ -n ${2:-} ]]; then sed 's/^/    /' <<<"$2"; fi
  fail=1
}
# check_stripped BIN DBGSYM NAME: BIN has no symbol table or debug info, and
# the -dbgsym package DBGSYM holds its debug info under BIN's build id
# (NAME: how the checks call BIN).
check_stripped() {
  local bin=$1 dbgsym=$2 name=$3 sections id
  sections=$(readelf -S -W "$bin" 2>&1 | grep -oE '\.(symtab|debug_info)' | tr '\n' ' ')
  id=$(readelf -n "$bin" 2>/dev/null | sed -n 's/.*Build ID: //p')
  if [[ -z $sections && -n $id ]] &&
     grep -q "usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug" <<<"$(dpkg-deb -c "$dbgsym")"; then
    pass "$name stripped; debug info in $(basename "$dbgsym") (build id $id)"
  else
    flunk "$name stripped with debug info in $(basename "$dbgsym")" "sections: $sections; build id: $id"
  fi
}
finish() {
  if [[ $fail -eq 0 ]]; then echo "$test_name: all checks passed"; else echo "$test_name: FAILED"; fi
  exit "$fail"
}
