#!/usr/bin/env bash
# Sets up a Debian 12 machine (deploy/setup.sh, then deploy/setup.sh --test while
# the shipped binaries build) and runs the whole test suite:
#   1. every Bazel test target: unit tests beside the code, integration and
#      end-to-end tests under tests/ (they start their own servers, Prometheus
#      and Alertmanager on 127.0.0.1 and stop them);
#   2. the quick start's non-interactive mode (deploy/quickstart.sh --smoke):
#      server and agent on this host, this host must appear with predictions;
#      its build with the precompiled system headers (deploy/pch/build_pch.sh
#      must make them);
#   3. the Debian packages and container images (deploy/package.sh, lintian
#      included, into a temporary directory), installed, run and purged on
#      this machine (tests/packaging/install_test.sh), pushed to a local
#      registry, pulled and run as deploy/k8s/ runs them
#      (tests/packaging/image_test.sh); TRACEHEALTH_PACKAGING=0 skips;
#      with TRACEHEALTH_ARM64=full (below) also the arm64 packages and the
#      images' arm64 half (deploy/package.sh --arch=all), checked and run
#      under qemu-aarch64 (tests/packaging/arm64_test.sh; skipped with the
#      reason without the cross compiler, qemu or the arm64 packages);
#   4. the kernel lab (tests/lab/run_lab.sh): Debian's cloud kernel under
#      qemu, the fgraph prediction calibrated and compared with timed
#      function_graph enables, and a real soft lockup reported and counted
#      as predicted; skipped (with the reason) without qemu or the kernel
#      package; TRACEHEALTH_LAB=0 skips. Then one arm64 kernel of the matrix
#      (6.18.15 -arm64-16k under qemu-system-aarch64: page size, shadow stack
#      a thread, walks per kind against real attaches; tests/lab/README.md);
#      TRACEHEALTH_ARM64_LAB=0 skips.
#   4a. the aarch64 cross build (bazel build --config=arm64) of the agent run
#      under qemu-aarch64 user emulation on every fixture host, its JSON
#      report compared with the x86-64 agent's (tests/arm64/qemu_agent_test.sh);
#      skipped (with the reason) without the cross compiler, qemu-user-static
#      or the arm64 packages (deploy/arm64/sysroot.sh); TRACEHEALTH_ARM64=0 skips,
#      TRACEHEALTH_ARM64=full also cross-builds the server and tracehealthctl
#      and runs all three together under qemu (--with_server), and packages
#      them (step 3, which runs first: this step's cross build then only
#      links again). Not the default: the server's cross build adds about
#      14 minutes to a run from a clean clone.
#   5. every libFuzzer target for a bounded time (tests/fuzz/run_fuzzers.sh,
#      TRACEHEALTH_FUZZ_SECONDS per target, default 10; 0 skips).
#   6. ThreadSanitizer over the server's concurrent code
#      (tests/reliability/run_tsan.sh, own output base; TRACEHEALTH_TSAN=0 skips).
#   7. deploy/k8s/'s overlays rendered with kustomize and every object
#      validated against the Kubernetes and prometheus-operator schemas
#      (tests/deploy/k8s_render_test.sh, npm packages cached outside the repo);
#      the monitoring mixin's generated alerts, recording rules and
#      dashboards current, promtool-checked and unit-tested, every alert with
#      its runbook (tests/deploy/mixin_test.sh);
#      deploy/setup.sh's build list covers every library the binaries link
#      and holds none of the test suite's packages
#      (tests/deploy/setup_split_test.sh);
#   8. style: every C++ file formatted with .clang-format
#      (tests/style/check_format.sh), the arrows of the dependency graph
#      (tests/style/check_deps.sh: no server/ target depends on agent/, no
#      shipped binary on tests/), and the thread-safety analysis on: step 1's
#      build is clang's analysis of the ABSL_GUARDED_BY annotations over the
#      whole tree (.bazelrc), and tests/style/check_thread_safety.sh shows it
#      refusing an unguarded access (both run before the Bazel server stops).
# Prints a closing "tests: N passed, N failed" line; exits non-zero on failure.
set -uo pipefail
cd "$(dirname "$0")/.."

setup_start=$(date +%s)
# The build list first; the shipped binaries then build (a cold build's
# longest part) while the test suite's packages install: none of those
# packages is a build input of the binaries (tests/deploy/setup_split_test.sh).
bash deploy/setup.sh || exit 1
early_log=$(mktemp)
bazel build //agent:tracehealth-agent //server:tracehealth-server \
  //tools/tracehealthctl:tracehealthctl >"$early_log" 2>&1 &
early_build=$!
bash deploy/setup.sh --test || { kill "$early_build"; wait; exit 1; }
# Its failure shows again, in full, in `bazel build //...` below.
wait "$early_build" || tail -n 20 "$early_log"
rm -f "$early_log"

# Each step's wall time, printed as the step ends and again in a summary at
# the end, so that a slow step shows where the run's minutes went.
times=()
step_name=""
step_start=$(date +%s)
step() {
  local now
  now=$(date +%s)
  [[ -n $step_name ]] && times+=("$((now - step_start)) s  ${step_name}")
  step_name=$1
  step_start=$now
  [[ -z $1 ]] || echo "== $1"
}
run_start=$(date +%s)
times+=("$((run_start - setup_start)) s  deploy/setup.sh --test, the shipped binaries built alongside")

log=$(mktemp)
status=0
extra_passed=0
extra_failed=0

# What failed, with the last lines each failure printed: shown again just
# before the closing line, so that a failure is readable from the end of a
# long log.
failures=$(mktemp)
trap 'rm -f "$log" "$failures"' EXIT
# failed_step NAME OUTPUT_FILE: notes NAME's failure: OUTPUT_FILE's verdict
# lines (failures, disagreements, the lab's judgements and tables), then its
# last lines (without the lab's metric dump).
failed_step() {
  {
    echo "-- $1"
    grep -aE 'FAIL|DISAGREE|NOT JUDGED|[Ee]rror|^lab: [A-Z]:|^\| ' "$2" | tail -n 40 | sed 's/^/   /'
    echo "   (last lines)"
    grep -av '^LAB metric' "$2" | tail -n 15 | sed 's/^/   /'
  } >>"$failures"
}

# One counted step beside the Bazel tests: runs "$@" and counts it as one
# passed or one failed test.
counted() {
  local out rc
  out=$(mktemp)
  "$@" 2>&1 | tee "$out"
  rc=${PIPESTATUS[0]}
  if [[ $rc -eq 0 ]]; then
    extra_passed=$((extra_passed + 1))
  else
    extra_failed=$((extra_failed + 1)); status=1
    failed_step "$step_name: $*" "$out"
  fi
  rm -f "$out"
  return "$rc"
}

# counted_unless_skipped LABEL CMD...: counted as counted() does, but a run
# that printed "LABEL: SKIPPED ..." (no qemu, no kernel package, registry
# unreachable...) is no pass.
counted_unless_skipped() {
  local label=$1 out rc
  shift
  out=$(mktemp)
  "$@" 2>&1 | tee "$out"
  rc=${PIPESTATUS[0]}
  if [[ $rc -eq 0 ]]; then
    grep -q "^${label}: SKIPPED" "$out" || extra_passed=$((extra_passed + 1))
  else
    extra_failed=$((extra_failed + 1)); status=1
    failed_step "$step_name: $*" "$out"
  fi
  rm -f "$out"
}

# Benchmarks are built (so they cannot rot) but not run here: see docs/benchmarks.md.
step "bazel build //..."
bazel build //... 2>&1 | tail -n 3
[[ ${PIPESTATUS[0]} -eq 0 ]] || { echo "tests: 0 passed, 1 failed"; exit 1; }

step "bazel test //..."
# agent_outage_test waits out a 3-minute server outage with two agents
# reporting once a second (nearly no CPU): it runs beside the other tests, as
# Bazel runs a test (its runfiles, TEST_SRCDIR, TEST_TMPDIR), instead of
# holding one of the machine's two test slots for 200 s.
outage=//tests/reliability:agent_outage_test
outage_bin=$(bazel info bazel-bin 2>/dev/null)/tests/reliability/agent_outage_test
outage_log=$(mktemp)
outage_tmp=$(mktemp -d)
(cd "$outage_bin.runfiles/tracehealth" &&
  TEST_SRCDIR="$outage_bin.runfiles" TEST_WORKSPACE=tracehealth \
    TEST_TMPDIR="$outage_tmp" "$outage_bin") >"$outage_log" 2>&1 &
outage_pid=$!
# Results are never taken from the cache: every test runs on every call.
bazel test --nocache_test_results --test_output=errors -- //... "-$outage" 2>&1 |
  tee "$log"
[[ ${PIPESTATUS[0]} -eq 0 ]] || status=1
if wait "$outage_pid"; then
  echo "$outage PASSED (beside bazel test)"
  extra_passed=$((extra_passed + 1))
else
  tail -n 40 "$outage_log"
  echo "$outage FAILED (beside bazel test)"
  extra_failed=$((extra_failed + 1)); status=1
  failed_step "$outage (beside bazel test)" "$outage_log"
fi
rm -rf "$outage_log" "$outage_tmp"

step "dependency direction (tests/style/check_deps.sh)"
counted bash tests/style/check_deps.sh

step "thread-safety analysis on (tests/style/check_thread_safety.sh)"
counted bash tests/style/check_thread_safety.sh

step "quick start, non-interactive"
# Its build reads the precompiled system headers: that they can be made with
# Bazel's flags and load is a step of its own (the quick start would go on
# without them).
counted bash deploy/pch/build_pch.sh
qs_home=$(mktemp -d -t tracehealth-smoke.XXXXXX)
counted env TRACEHEALTH_HOME="$qs_home" bash deploy/quickstart.sh --smoke
rm -rf "$qs_home"

if [[ ${TRACEHEALTH_PACKAGING:-1} != 0 ]]; then
  step "Debian packages and container images (deploy/package.sh, tests/packaging/)"
  pkg_out=$(mktemp -d -t tracehealth-package.XXXXXX)
  pkg_arch=amd64
  [[ ${TRACEHEALTH_ARM64:-1} == full ]] && pkg_arch=all
  if counted bash deploy/package.sh --arch="$pkg_arch" "$pkg_out"; then
    for t in install_test image_test; do
      counted bash "tests/packaging/$t.sh" "$pkg_out"
    done
    if [[ $pkg_arch == all ]]; then
      counted_unless_skipped "arm64 packages" bash tests/packaging/arm64_test.sh "$pkg_out"
    else
      echo "arm64 packages: not built (TRACEHEALTH_ARM64=full builds and checks them)"
    fi
  else
    echo "packaging: the build failed; install and image tests not run"
  fi
  rm -rf "$pkg_out"
fi

if [[ ${TRACEHEALTH_LAB:-1} != 0 ]]; then
  step "kernel lab (tests/lab/run_lab.sh)"
  lab_out=$(mktemp -d -t tracehealth-lab.XXXXXX)
  counted_unless_skipped lab bash tests/lab/run_lab.sh --out "$lab_out"
  rm -rf "$lab_out"
fi

if [[ ${TRACEHEALTH_ARM64_LAB:-1} != 0 ]]; then
  step "arm64 kernel lab, one kernel of the matrix (tests/lab/run_matrix.sh)"
  # 16 KiB pages, before the arm64 entry-only fprobe backport: the agent's
  # page size, shadow stack a thread and walks against the kernel's, and a
  # second function_graph user (one pass). The whole matrix:
  # tests/lab/README.md.
  mx_out=$(mktemp -d -t tracehealth-matrix.XXXXXX)
  counted_unless_skipped matrix env TRACEHEALTH_MATRIX=6.18.15-arm64-16k \
    TRACEHEALTH_MATRIX_NS=2048,12288 TRACEHEALTH_MATRIX_KINDS=function_graph,kprobe_multi \
    TRACEHEALTH_MATRIX_SECOND=function_graph \
    TRACEHEALTH_MATRIX_TIMEOUT=600 bash tests/lab/run_matrix.sh --out "$mx_out"
  rm -rf "$mx_out"
fi

if [[ ${TRACEHEALTH_ARM64:-1} != 0 ]]; then
  step "arm64 agent under qemu-aarch64 (tests/arm64/qemu_agent_test.sh)"
  arm64_args=()
  [[ ${TRACEHEALTH_ARM64:-1} == full ]] && arm64_args=(--with_server)
  counted_unless_skipped arm64 bash tests/arm64/qemu_agent_test.sh "${arm64_args[@]}"
fi

# Stop the Bazel server this run started (CI must leave nothing running).
bazel shutdown >/dev/null 2>&1 || true

fuzz_seconds=${TRACEHEALTH_FUZZ_SECONDS:-10}
if [[ $fuzz_seconds -gt 0 ]]; then
  step "fuzzing, ${fuzz_seconds} s per target"
  counted bash tests/fuzz/run_fuzzers.sh "$fuzz_seconds"
fi

if [[ ${TRACEHEALTH_TSAN:-1} != 0 ]]; then
  step "ThreadSanitizer (tests/reliability/run_tsan.sh)"
  counted bash tests/reliability/run_tsan.sh
fi

step "Kubernetes overlays rendered and schema-checked (tests/deploy/k8s_render_test.sh)"
counted_unless_skipped "k8s render" bash tests/deploy/k8s_render_test.sh

step "monitoring mixin (tests/deploy/mixin_test.sh)"
counted bash tests/deploy/mixin_test.sh

step "setup split (tests/deploy/setup_split_test.sh)"
counted bash tests/deploy/setup_split_test.sh

step "clang-format (tests/style/check_format.sh)"
counted bash tests/style/check_format.sh

step ""
grep -E '^//.*(FAILED|TIMEOUT|NO STATUS|INCOMPLETE)' "$log" | sed 's/^/-- bazel test: /' >>"$failures"
if [[ -s $failures ]]; then
  echo "== what failed"
  cat "$failures"
fi
echo "== step times (total $(( $(date +%s) - setup_start )) s)"
printf '  %s\n' "${times[@]}"

passed=$(grep -cE '^//.*PASSED' "$log" || true)
failed=$(grep -cE '^//.*(FAILED|TIMEOUT|NO STATUS|INCOMPLETE)' "$log" || true)
passed=$((passed + extra_passed))
failed=$((failed + extra_failed))
if [[ $status -ne 0 && $failed -eq 0 ]]; then failed=1; fi
echo "tests: ${passed} passed, ${failed} failed"
exit "$status"
