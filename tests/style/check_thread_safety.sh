#!/usr/bin/env bash
# Clang's thread-safety analysis over the whole project: compiles every
# target with --config=tsa (.bazelrc: clang, -Wthread-safety
# -Werror=thread-safety) in its own output base, so the gcc build's cache and
# bazel-* symlinks stay as they are. A member read or written without the
# mutex its ABSL_GUARDED_BY names, a function called without the lock its
# ABSL_EXCLUSIVE_LOCKS_REQUIRED names, or a lock not released fails the
# build; the offending lines are printed.
#
# Usage: tests/style/check_thread_safety.sh [bazel target ...] (default: the
# whole tree but //proto, the generated code, and //third_party)
# Environment: TRACEHEALTH_TSA_OUTPUT_BASE (default
# ~/.cache/tracehealth-tsa-bazel; its Bazel server is shut down at the end),
# TRACEHEALTH_TSA_JOBS (default 2). Exit 0 when everything builds without a
# thread-safety warning.
set -uo pipefail
cd "$(dirname "$0")/../.."

output_base=${TRACEHEALTH_TSA_OUTPUT_BASE:-$HOME/.cache/tracehealth-tsa-bazel}
jobs=${TRACEHEALTH_TSA_JOBS:-2}
targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
  # The whole tree but the code protoc generates (its headers are still
  # generated for the code that includes them; only its own compilation,
  # which has nothing to analyse, is skipped) and third_party. Named per
  # top-level folder rather than as //...: in another output base, //...
  # would also descend into the bazel-* symlinks of the main build.
  targets=(//:all)
  while read -r dir; do
    [[ $dir == proto || $dir == third_party ]] || targets+=("//${dir}/...")
  done < <(
    if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
      git ls-files -- '*BUILD.bazel' '*BUILD'
    else
      find . -path './bazel-*' -prune -o \( -name BUILD.bazel -o -name BUILD \) -print |
        sed 's|^\./||'
    fi | grep / | cut -d/ -f1 | sort -u)
fi

log=$(mktemp -t tracehealth-tsa.XXXXXX)
trap 'rm -f "$log"' EXIT
start=$(date +%s)
# --keep_going: every warning of the tree in one run, not only the first.
# Only the compilations matter (the analysis is part of compiling): nothing
# is linked but the tools a build step runs.
bazel --output_base="$output_base" build --config=tsa --jobs="$jobs" \
  --keep_going --output_groups=compilation_outputs --symlink_prefix=/ \
  "${targets[@]}" >"$log" 2>&1
rc=$?
bazel --output_base="$output_base" shutdown >/dev/null 2>&1 || true
warnings=$(grep -c -e '-Wthread-safety[a-z-]*\]' "$log" || true)
if [[ $rc -ne 0 ]]; then
  # The warnings with their source lines; else the tail (a non-analysis error).
  if [[ $warnings -gt 0 ]]; then
    grep -A3 -e '-Wthread-safety[a-z-]*\]' "$log"
  else
    tail -n 30 "$log"
  fi
fi
echo "thread-safety: bazel build exit ${rc}, ${warnings} warnings," \
  "$(( $(date +%s) - start )) s"
[[ $rc -eq 0 ]]
