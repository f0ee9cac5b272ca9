#!/usr/bin/env bash
# The thread-safety analysis is on: every C++ compilation of the build runs
# clang's analysis of the ABSL_GUARDED_BY / ABSL_*_LOCKS_REQUIRED annotations
# as an error (.bazelrc), so `bazel build //...` is the analysis of the whole
# tree. This check builds //tests/style:unguarded_access, a file with one
# write of a guarded member without its mutex and one call of a function
# that requires a lock without it, and passes only when the build refuses it
# for exactly those two reasons. It fails when the build accepts the file
# (the analysis is off: another compiler, or the flags gone) or refuses it
# for anything else.
#
# Usage: tests/style/check_thread_safety.sh (in the workspace's output base;
# a build of one file).
set -uo pipefail
cd "$(dirname "$0")/../.."

log=$(mktemp -t tracehealth-tsa.XXXXXX)
trap 'rm -f "$log"' EXIT
if bazel build --color=no //tests/style:unguarded_access >"$log" 2>&1; then
  echo "thread-safety: FAIL: the build accepted tests/style/unguarded_access.cc;" \
    "the analysis is not on"
  exit 1
fi
write=$(grep -c "writing variable 'count_' requires holding mutex 'mu_' exclusively \[-Werror,-Wthread-safety-analysis\]" "$log")
call=$(grep -c "calling function 'ReadLocked' requires holding mutex 'mu_' exclusively \[-Werror,-Wthread-safety-analysis\]" "$log")
errors=$(grep -c "error:" "$log")
if [[ $write -ne 1 || $call -ne 1 || $errors -ne 2 ]]; then
  echo "thread-safety: FAIL: expected the two analysis errors and nothing else" \
    "(write ${write}, call ${call}, errors ${errors}):"
  grep -A3 "error" "$log" | head -n 40
  exit 1
fi
echo "thread-safety: the build refuses an unguarded write and an unlocked call"
