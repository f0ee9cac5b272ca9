#!/usr/bin/env bash
# Sets up a Debian 12 machine (deploy/setup.sh) and runs the whole test suite:
# every Bazel test target (unit tests beside the code, integration and
# end-to-end tests under tests/ that start their own servers on loopback).
# Prints a closing "tests: N passed, N failed" line; exits non-zero on failure.
set -euo pipefail
cd "$(dirname "$0")/.."

bash deploy/setup.sh

log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
# Benchmarks are built (so they cannot rot) but not run here: see README.
bazel build //... 2>&1 | tail -n 5
# Results are never taken from the cache: every test runs on every call.
bazel test --nocache_test_results --test_output=errors //... 2>&1 | tee "$log" || status=$?
# Stop the Bazel server this run started (CI must leave nothing running).
bazel shutdown >/dev/null 2>&1 || true

passed=$(grep -cE '^//.*PASSED' "$log" || true)
failed=$(grep -cE '^//.*(FAILED|TIMEOUT|NO STATUS|INCOMPLETE)' "$log" || true)
if [[ $status -ne 0 && $failed -eq 0 ]]; then failed=1; fi
echo "tests: ${passed} passed, ${failed} failed"
exit "$status"
