#!/usr/bin/env bash
# Builds every libFuzzer target of tests/fuzz with clang (--config=fuzz,
# ASan+UBSan) in its own Bazel output base and runs each for a bounded time
# over its seed corpus.
#
# Usage: tests/fuzz/run_fuzzers.sh SECONDS_PER_TARGET [TARGET...]
#   JOBS=N          fuzzers run in parallel (default: number of CPUs)
#   FUZZ_OUTPUT_BASE  Bazel output base (default ~/.cache/tracehealth-fuzz-bazel)
#   FUZZ_ARTIFACTS  where crashing inputs are kept (default: a temp dir)
#
# Prints per target: executions, exec/s, corpus size, crashes. Exits 1 when
# any target crashed (or leaked, timed out, ran out of memory), 2 on a build
# or usage error. The Bazel server of the output base is shut down at the end.
set -u -o pipefail

if [[ $# -lt 1 || ! "$1" =~ ^[0-9]+$ || "$1" -lt 1 ]]; then
  echo "usage: $0 SECONDS_PER_TARGET [TARGET...]" >&2
  exit 2
fi
SECONDS_PER_TARGET="$1"
shift

cd "$(dirname "$0")/../.." || exit 2
OUTPUT_BASE="${FUZZ_OUTPUT_BASE:-$HOME/.cache/tracehealth-fuzz-bazel}"
JOBS="${JOBS:-$(nproc)}"
BAZEL=(bazel --output_base="$OUTPUT_BASE")
trap '"${BAZEL[@]}" shutdown >/dev/null 2>&1' EXIT

if [[ $# -gt 0 ]]; then
  TARGETS=("$@")
else
  TARGETS=()
  for f in tests/fuzz/*_fuzzer.cc; do
    n="$(basename "$f" _fuzzer.cc)"
    TARGETS+=("$n")
  done
fi

LABELS=()
for n in "${TARGETS[@]}"; do
  LABELS+=("//tests/fuzz:${n}_fuzzer" "//tests/fuzz:${n}_seed_list")
done

echo "== building ${#TARGETS[@]} fuzz targets (clang, ASan+UBSan+libFuzzer)"
build_start=$SECONDS
if ! "${BAZEL[@]}" build --config=fuzz --symlink_prefix=/ "${LABELS[@]}" \
    2> >(grep -v "Cannot export local symbol" >&2); then
  echo "fuzz build failed" >&2
  exit 2
fi
echo "== build took $((SECONDS - build_start)) s"
BIN="$("${BAZEL[@]}" info --config=fuzz bazel-bin 2>/dev/null)"
EXECROOT="$("${BAZEL[@]}" info --config=fuzz execution_root 2>/dev/null)"

WORK="$(mktemp -d "${TMPDIR:-/tmp}/tracehealth-fuzz.XXXXXX")"
ARTIFACTS="${FUZZ_ARTIFACTS:-$WORK/artifacts}"
mkdir -p "$ARTIFACTS"

run_one() {
  local n="$1" dir="$WORK/$1"
  mkdir -p "$dir/corpus" "$dir/seeds"
  local i=0
  while IFS= read -r seed; do
    i=$((i + 1))
    cp -L "$EXECROOT/$seed" "$dir/seeds/$i-$(basename "$seed")"
  done < "$BIN/tests/fuzz/${n}_seeds.txt"
  # -max_len keeps the large fixture files (cpuinfo, vmallocinfo) from
  # slowing every execution; longer seeds are truncated by libFuzzer.
  "$BIN/tests/fuzz/${n}_fuzzer" \
    -max_total_time="$SECONDS_PER_TARGET" -max_len=16384 -timeout=10 \
    -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$ARTIFACTS/${n}-" \
    "$dir/corpus" "$dir/seeds" > "$dir/log" 2>&1
  echo $? > "$dir/rc"
}

echo "== fuzzing ${SECONDS_PER_TARGET} s per target, ${JOBS} at a time"
running=0
for n in "${TARGETS[@]}"; do
  run_one "$n" &
  running=$((running + 1))
  if [[ $running -ge $JOBS ]]; then
    wait -n
    running=$((running - 1))
  fi
done
wait

failed=0
total_execs=0
printf '%-20s %12s %10s %8s %8s  %s\n' target executions exec/s corpus crashes result
for n in "${TARGETS[@]}"; do
  dir="$WORK/$n"
  rc="$(cat "$dir/rc" 2>/dev/null || echo 99)"
  execs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log" | tail -1)"
  rate="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$dir/log" | tail -1)"
  corpus="$(find "$dir/corpus" -type f | wc -l)"
  crashes="$(find "$ARTIFACTS" -maxdepth 1 -name "${n}-*" -type f | wc -l)"
  result=ok
  if [[ "$rc" != 0 || "$crashes" -gt 0 || -z "$execs" ]]; then
    result="FAILED (exit $rc)"
    [[ "$crashes" -eq 0 ]] && crashes=1
    failed=1
  fi
  total_execs=$((total_execs + ${execs:-0}))
  printf '%-20s %12s %10s %8s %8s  %s\n' "$n" "${execs:-?}" "${rate:-?}" \
    "$corpus" "$crashes" "$result"
  if [[ "$result" != ok ]]; then
    echo "---- $n log (tail) ----"
    tail -n 40 "$dir/log"
    echo "---- crashing inputs: $ARTIFACTS/${n}-*"
  fi
done
echo "== total executions: $total_execs"
if [[ $failed -ne 0 ]]; then
  echo "FUZZING FOUND CRASHES (inputs kept in $ARTIFACTS)"
  exit 1
fi
rm -rf "$WORK"
echo "FUZZING OK: no crashes"
