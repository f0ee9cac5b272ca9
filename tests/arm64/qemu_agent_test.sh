#!/usr/bin/env bash
# The arm64 agent, cross-built (bazel build --config=arm64) and run under
# qemu-aarch64 user emulation, must report every fixture host
# (tests/fixtures/hosts/*) exactly as the x86-64 agent does: both run
# `--once --format=json` on the same tree and tests/arm64/compare_reports.py
# compares the JSON (wall-clock times and the agent's own cycle cost aside,
# see there). Also: `file` must call the three binaries (agent, server,
# tracehealthctl) ARM aarch64, the comparison itself must see a changed field
# (checked first, on made-up reports), and the arm64 server, agent and
# tracehealthctl, all under qemu, must work together: the agent streams a
# fixture host to the server, tracehealthctl reads it back with its thread
# count and a prediction for each of the 10 probe kinds.
#
# Usage: qemu_agent_test.sh [--with_server]. Without --with_server only the
# agent is cross-built and compared (what deploy/test.sh runs by default: the
# server's cross build is the longer part of a cold run); with it the server
# and tracehealthctl are cross-built too, checked with `file` and run with the
# agent under qemu (deploy/test.sh with TRACEHEALTH_ARM64=full).
#
# Skipped, with the reason on a line starting "arm64: SKIPPED", without the
# cross compiler or qemu-aarch64 (deploy/setup.sh --test installs both) or
# when the arm64 sysroot cannot be fetched (deploy/arm64/sysroot.sh exit 3).
# Prints PASS/FAIL per host; exits non-zero on any failure.
set -uo pipefail
cd "$(dirname "$0")/../.."

skip() { echo "arm64: SKIPPED: $*"; exit 0; }
fail=0
with_server=0
case ${1:-} in
  --with_server) with_server=1 ;;
  "") ;;
  *) echo "usage: $0 [--with_server]" >&2; exit 2 ;;
esac

command -v aarch64-linux-gnu-g++ >/dev/null ||
  skip "no aarch64-linux-gnu-g++ (package g++-aarch64-linux-gnu)"
qemu=$(command -v qemu-aarch64-static || command -v qemu-aarch64) ||
  skip "no qemu-aarch64 (package qemu-user-static)"

sysroot_err=$(mktemp)
work=$(mktemp -d -t tracehealth-arm64.XXXXXX)
trap 'rm -rf "$work" "$sysroot_err"' EXIT
sysroot=$(bash deploy/arm64/sysroot.sh 2>"$sysroot_err")
rc=$?
if [[ $rc -eq 3 ]]; then
  skip "$(grep -m1 '^arm64 sysroot: unavailable:' "$sysroot_err" | sed 's/^arm64 sysroot: unavailable: //')"
elif [[ $rc -ne 0 ]]; then
  cat "$sysroot_err"
  echo "FAIL deploy/arm64/sysroot.sh exited $rc"
  exit 1
fi

# The comparison sees a difference, and ignores only what it says it does.
compare=tests/arm64/compare_reports.py
echo '{"observed_at":"2026-01-01T00:00:00Z","snapshot":{"threads":{"total":"12000"}},"x":[1.5]}' >"$work/a.json"
echo '{"observed_at":"2026-01-02T00:00:00Z","snapshot":{"threads":{"total":"12000"}},"x":[1.5]}' >"$work/b.json"
echo '{"observed_at":"2026-01-01T00:00:00Z","snapshot":{"threads":{"total":"12001"}},"x":[1.5]}' >"$work/c.json"
echo '{"observed_at":"2026-01-01T00:00:00Z","snapshot":{"threads":{"total":"12000"}},"x":[1.50000000000001]}' >"$work/d.json"
echo '{"observed_at":"2026-01-01T00:00:00Z","snapshot":{"threads":{"total":"12000"}},"x":[1.5],"health":{"opens":3}}' >"$work/e.json"
echo '{"observed_at":"2026-01-01T00:00:00Z","snapshot":{"threads":{"total":"12000"}},"x":[1.5],"health":{"opens":3,"cycle_cpu_seconds":0.028}}' >"$work/f.json"
echo '{"observed_at":"2026-01-01T00:00:00Z","snapshot":{"threads":{"total":"12000"}},"x":[1.5],"health":{"opens":3,"cycle_cpu_seconds":0.028,"reads":1}}' >"$work/g.json"
if python3 "$compare" "$work/a.json" "$work/b.json" >/dev/null &&
   python3 "$compare" "$work/e.json" "$work/f.json" >/dev/null &&
   ! python3 "$compare" "$work/f.json" "$work/g.json" >/dev/null &&
   ! python3 "$compare" "$work/a.json" "$work/c.json" >/dev/null &&
   ! python3 "$compare" "$work/a.json" "$work/d.json" >/dev/null; then
  echo "PASS compare_reports: a time and an absent cycle cost ignored, a count, an absent field and a float's last digits seen"
else
  echo "FAIL compare_reports: does not tell equal from unequal reports"
  fail=1
fi

build() {
  local start=$(date +%s)
  if ! bazel build "$@" >"$work/build.log" 2>&1; then
    tail -n 30 "$work/build.log"
    echo "FAIL bazel build $*"
    exit 1
  fi
  echo "built $* in $(( $(date +%s) - start )) s"
}
build //agent:tracehealth-agent
x86=$work/tracehealth-agent.x86_64
cp "$(bazel info bazel-bin 2>/dev/null)/agent/tracehealth-agent" "$x86"
arm_targets=(//agent:tracehealth-agent)
((with_server)) && arm_targets+=(//server:tracehealth-server //tools/tracehealthctl)
build --config=arm64 "${arm_targets[@]}"
arm_bin=$(bazel info --config=arm64 bazel-bin 2>/dev/null)
arm=$work/tracehealth-agent.aarch64
arm_server=$work/tracehealth-server.aarch64
arm_ctl=$work/tracehealthctl.aarch64
cp "$arm_bin/agent/tracehealth-agent" "$arm"
arm_binaries=("$arm")
if ((with_server)); then
  cp "$arm_bin/server/tracehealth-server" "$arm_server"
  cp "$arm_bin/tools/tracehealthctl/tracehealthctl" "$arm_ctl"
  arm_binaries+=("$arm_server" "$arm_ctl")
fi

for b in "${arm_binaries[@]}"; do
  if file -L "$b" | grep -q 'ELF 64-bit LSB .*ARM aarch64'; then
    echo "PASS file $(basename "$b"): $(file -L -b "$b" | cut -d, -f1-2) ($(stat -c %s "$b") bytes)"
  else
    echo "FAIL file $(basename "$b"): $(file -L -b "$b")"
    fail=1
  fi
done

hosts=0
for dir in tests/fixtures/hosts/*/; do
  host=$(basename "$dir")
  hosts=$((hosts + 1))
  args=(--once --format=json "--root=$PWD/$dir" "--host_id=$host")
  "$x86" "${args[@]}" "--state_dir=$work/$host.x86/state" \
    >"$work/$host.x86.json" 2>"$work/$host.x86.err"
  rc_x86=$?
  start=$(date +%s%N)
  QEMU_LD_PREFIX=$sysroot "$qemu" -L "$sysroot" "$arm" "${args[@]}" \
    "--state_dir=$work/$host.arm/state" >"$work/$host.arm.json" 2>"$work/$host.arm.err"
  rc_arm=$?
  ms=$(( ($(date +%s%N) - start) / 1000000 ))
  if [[ $rc_x86 -ne 0 || $rc_arm -ne 0 ]]; then
    echo "FAIL $host: exit codes x86-64 $rc_x86, arm64 $rc_arm"
    head -n 5 "$work/$host.x86.err" "$work/$host.arm.err"
    fail=1
    continue
  fi
  if ! cmp -s "$work/$host.x86.err" "$work/$host.arm.err"; then
    echo "FAIL $host: the agents' stderr differ"
    diff "$work/$host.x86.err" "$work/$host.arm.err" | head -n 10
    fail=1
  fi
  if python3 "$compare" "$work/$host.x86.json" "$work/$host.arm.json" >"$work/$host.diff"; then
    echo "PASS $host: arm64 report equals the x86-64 one (qemu run ${ms} ms)"
  else
    echo "FAIL $host: the reports differ (x86-64 != arm64):"
    head -n 20 "$work/$host.diff"
    fail=1
  fi
done
((hosts > 0)) || { echo "FAIL no fixture host found"; fail=1; }

# Server, agent and tracehealthctl, all arm64 under qemu, on loopback
# (--with_server).
server_e2e() {
  on_arm() { QEMU_LD_PREFIX=$sysroot "$qemu" -L "$sysroot" "$@"; }
  e2e=$work/e2e
  mkdir -p "$e2e/server" "$e2e/agent"
  on_arm "$arm_server" --listen=127.0.0.1:0 --metrics_listen=127.0.0.1:0 \
    --data_dir="$e2e/server" --port_file="$e2e/ports" \
    --alert_rules=deploy/alerts/rules.yaml --host_report_rate=0 >"$e2e/server.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 1 300); do
    [[ -s $e2e/ports ]] && break
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
  done
  grpc=$(sed -n 's/^grpc=//p' "$e2e/ports" 2>/dev/null)
  if [[ -z $grpc ]]; then
    echo "FAIL arm64 server did not start:"
    tail -n 10 "$e2e/server.log"
    fail=1
  else
    on_arm "$arm" "--root=$PWD/tests/fixtures/hosts/kasan-6.12-256cpu" \
      --state_dir="$e2e/agent" --server="$grpc" --host_id=arm64-e2e --max_reports=1 \
      >"$e2e/agent.log" 2>&1
    agent_rc=$?
    json=""
    for _ in $(seq 1 60); do
      json=$(on_arm "$arm_ctl" --server="$grpc" --json host arm64-e2e 2>/dev/null) && break
      json=""
      sleep 0.5
    done
    kinds=$(grep -o '"probe_kind": *"PROBE_KIND_[A-Z_]*"' <<<"$json" | sort -u | wc -l)
    # The fixture's 61000 threads, as the server stored them (a uint64: JSON string).
    threads=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["latest"]["snapshot"]["threads"]["total"])' <<<"$json" 2>/dev/null)
    if [[ $agent_rc -eq 0 && $kinds -eq 10 && $threads == 61000 ]]; then
      echo "PASS arm64 server + agent + tracehealthctl: kasan-6.12-256cpu stored, 61000 threads, 10 probe kinds predicted"
    else
      echo "FAIL arm64 server + agent + tracehealthctl: agent exit $agent_rc, threads '$threads', $kinds probe kinds (want 0, 61000, 10)"
      tail -n 5 "$e2e/agent.log" "$e2e/server.log"
      fail=1
    fi
  fi
  kill "$server_pid" 2>/dev/null
  wait "$server_pid" 2>/dev/null
}
((with_server)) && server_e2e
if ((fail)); then echo "arm64: FAIL"; else echo "arm64: PASS ($hosts fixture hosts$( ((with_server)) && echo ", server and tracehealthctl"))"; fi
exit "$fail"
