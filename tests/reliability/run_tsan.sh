#!/usr/bin/env bash
# ThreadSanitizer over the server's concurrent code (tests/RELIABILITY.md,
# "TSan"): builds with --config=tsan in its own output base and runs the
# check of the absl annotations (tsan_absl_sync_test), the server's unit
# tests, the server integration test and the hostile-input and load/restart
# tests (they start the TSan-built server binary). Every TSan
# report (test processes and servers alike) goes to a log file; afterwards
# tsan_reports.py fails the run if any report involves this project's code.
# Races inside the system libraries are ignored through tsan.supp.
#
# Usage: tests/reliability/run_tsan.sh [bazel target ...]
# Environment: TRACEHEALTH_TSAN_OUTPUT_BASE (default
# ~/.cache/tracehealth-tsan-bazel; its Bazel server is shut down at the end),
# TRACEHEALTH_TSAN_JOBS (default 2). Exit 0 when the tests pass and no report
# involves project code.
set -uo pipefail
cd "$(dirname "$0")/../.."

output_base=${TRACEHEALTH_TSAN_OUTPUT_BASE:-$HOME/.cache/tracehealth-tsan-bazel}
jobs=${TRACEHEALTH_TSAN_JOBS:-2}
targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
  targets=(
    //tests/reliability:tsan_absl_sync_test
    //common:happens_before_test
    //server/...
    //tests/server:server_integration_test
    //tests/server:server_refusals_test
    //tests/reliability:hostile_reports_test
    //tests/reliability:hostile_access_test
    //tests/reliability:hostile_flood_test
    //tests/reliability:hostile_queries_test
    //tests/reliability:load_restart_test
  )
fi

logs=$(mktemp -d -t tracehealth-tsan.XXXXXX)
symbolizer=$(command -v llvm-symbolizer || true)
tsan_options="suppressions=$PWD/tests/reliability/tsan.supp:log_path=$logs/tsan"
# The verdict is tsan_reports.py's, not the exit code of each process.
# history_size=5 keeps 1 M accesses per thread (default 128 K), so that far
# fewer reports have a stack TSan cannot restore and tsan_reports.py can tell
# whose both accesses are.
tsan_options+=":exitcode=0:second_deadlock_stack=1:history_size=5"
[[ -n $symbolizer ]] && tsan_options+=":external_symbolizer_path=$symbolizer"

start=$(date +%s)
bazel --output_base="$output_base" test --config=tsan --jobs="$jobs" \
  --nocache_test_results --test_output=errors --test_timeout=900 \
  --sandbox_writable_path="$logs" --test_env=TSAN_OPTIONS="$tsan_options" \
  "${targets[@]}"
tests_rc=$?
bazel --output_base="$output_base" shutdown >/dev/null 2>&1 || true
echo "tsan: bazel test exit ${tests_rc}, $(( $(date +%s) - start )) s"

python3 tests/reliability/tsan_reports.py "$logs/tsan"
reports_rc=$?
if [[ $tests_rc -eq 0 && $reports_rc -eq 0 ]]; then
  rm -rf "$logs"
  exit 0
fi
echo "tsan: reports kept in $logs"
exit 1
