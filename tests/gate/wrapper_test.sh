#!/usr/bin/env bash
# deploy/examples as shipped: the tracehealth-gate wrapper runs its command
# only when the gate says safe (fixture hosts through --root, harmless
# commands), infers the probe kind and filter from a bpftrace program, and
# --force overrides; the systemd drop-ins pass systemd-analyze verify and
# their ExecStartPre command line is a valid gate invocation.
set -uo pipefail
root="${TEST_SRCDIR}/${TEST_WORKSPACE}"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
gate="$root/deploy/examples/tracehealth-gate"
hosts="$root/tests/fixtures/hosts"
export TRACEHEALTHCTL="$root/tools/tracehealthctl/tracehealthctl"
fail=0

# expect NAME WANT_CODE WANT_STDOUT STDERR_SUBSTRING -- ARGS...
expect() {
  local name=$1 want_code=$2 want_out=$3 want_err=$4
  shift 5
  local out err code
  out=$("$@" 2>"$tmp/err"); code=$?
  err=$(cat "$tmp/err")
  if [[ $code != "$want_code" || $out != "$want_out" || $err != *"$want_err"* ]]; then
    echo "FAIL $name: exit $code (want $want_code)"
    echo "    stdout: $out"; echo "    stderr: $err" | sed 's/^/    /'
    fail=1
  else
    echo "PASS $name"
  fi
}

safe="$hosts/fgraph-active-6.19"
lockup="$hosts/preempt-none-6.16-240k"
none="$hosts/no-tracefs"

expect "safe host runs the command" 0 "ran" \
  "tracehealth-gate: safe: function_graph attach finds fgraph already active" -- \
  "$gate" --root="$safe" --probe=function_graph -- echo ran
expect "lockup host does not" 1 "" \
  "tracehealth-gate: not running 'echo' (gate exit 1; --force runs it anyway)" -- \
  "$gate" --root="$lockup" --probe=function_graph -- echo ran
expect "the reason is printed" 1 "" \
  "tracehealth-gate: unsafe: function_graph attach walks 240000 threads: 79.86 s > 2.00 s budget; soft lockup" -- \
  "$gate" --root="$lockup" --probe=function_graph -- echo ran
expect "--force runs it anyway" 0 "ran" \
  "tracehealth-gate: --force: running 'echo' anyway" -- \
  "$gate" --root="$lockup" --probe=function_graph --force -- echo ran
# fgraph-active-6.19: one init_task_vars pass over 50,000 threads at 88.7 ns
# (4.437 ms) + 2,000 sites at 1 us = 6.437 ms.
expect "a tighter budget" 1 "" "6.4 ms > 1.0 ms budget" -- \
  "$gate" --root="$safe" --probe=function_graph --max_latency=1ms -- echo ran

# A stand-in bpftrace on PATH: the wrapper must infer what it attaches.
mkdir -p "$tmp/bin"
printf '#!/bin/sh\necho "bpftrace ran: $*"\n' > "$tmp/bin/bpftrace"
chmod +x "$tmp/bin/bpftrace"
prog='kprobe:vfs_* { @a = count(); } kretprobe:vfs_* { @b = count(); }'
# 6.19: kprobe_multi_return uses fgraph, which is already active: safe.
expect "bpftrace inferred: kretprobe with a wildcard" 0 "bpftrace ran: -e $prog" \
  "tracehealth-gate: safe: kprobe_multi_return attach finds fgraph already active" -- \
  env PATH="$tmp/bin:$PATH" "$gate" --root="$safe" -- bpftrace -e "$prog"
expect "bpftrace on the lockup host" 1 "" \
  "unsafe: kprobe_multi_return attach walks 240000 threads" -- \
  env PATH="$tmp/bin:$PATH" "$gate" --root="$lockup" -- bpftrace -e "$prog"
# The pattern is counted: a module filter with no such module selects none.
expect "module:function becomes FUNCTION:mod:MODULE" 2 "" \
  "filter 'ext4_*:mod:ext4' selects none of the 2000 functions" -- \
  env PATH="$tmp/bin:$PATH" "$gate" --root="$safe" -- bpftrace -e 'kretprobe:ext4:ext4_* {}'
expect "no tracefs: unknown" 2 "" \
  "unknown: kprobe_multi_return: filter 'vfs_*' cannot be counted: tracefs is not mounted" -- \
  env PATH="$tmp/bin:$PATH" "$gate" --root="$none" -- bpftrace -e 'kretprobe:vfs_* {}'
expect "fentry never walks" 0 "bpftrace ran: -e fentry:vfs_read {}" \
  "safe: fentry attach does not use fgraph on this kernel" -- \
  env PATH="$tmp/bin:$PATH" "$gate" --root="$lockup" -- bpftrace -e 'fentry:vfs_read {}'
printf 'kretprobe:do_sys_* { @[func] = count(); }\n' > "$tmp/open.bt"
expect "a .bt script" 1 "" "unsafe: kprobe_multi_return attach walks 240000 threads" -- \
  env PATH="$tmp/bin:$PATH" "$gate" --root="$lockup" -- bpftrace "$tmp/open.bt"
expect "trace-cmd function_graph with -l" 1 "" \
  "unsafe: function_graph attach walks 240000 threads" -- \
  "$gate" --root="$lockup" -- trace-cmd record -p function_graph -l 'vfs_*'
expect "nothing to infer" 3 "" \
  "tracehealth-gate: cannot tell which probe 'echo' attaches; give --probe=KIND" -- \
  "$gate" --root="$safe" -- echo hi
expect "no command" 3 "" "usage: tracehealth-gate" -- "$gate" --probe=fentry

# systemd: the drop-ins with a unit they apply to, verified with the real
# systemd-analyze (binaries swapped for ones that exist); any output fails.
verify() {  # verify UNIT_FILE DROPIN_DIR_NAME DROPIN_FILE
  local d="$tmp/units-$RANDOM" out
  mkdir -p "$d/$2"
  sed -E 's|/usr/bin/tracehealth[a-z-]*|/bin/true|' "$1" > "$d/$(basename "$1")"
  sed -E 's|/usr/bin/tracehealth[a-z-]*|/bin/true|' "$3" > "$d/$2/$(basename "$3")"
  out=$(SYSTEMD_UNIT_PATH="$d:" systemd-analyze verify "$d/$(basename "$1")" 2>&1 |
        grep -v 'Failed to connect to bus' || true)
  [[ -z $out ]] || { echo "$out"; return 1; }
}
if command -v systemd-analyze >/dev/null; then
  printf '[Unit]\nDescription=a BPF agent\n[Service]\nExecStart=/bin/true\n' \
    > "$tmp/example-bpf-agent.service"
  if verify "$tmp/example-bpf-agent.service" example-bpf-agent.service.d \
      "$root/deploy/examples/bpf-agent.service.d/10-tracehealth-gate.conf"; then
    echo "PASS systemd-analyze verify bpf-agent drop-in"
  else
    echo "FAIL systemd-analyze verify bpf-agent drop-in"; fail=1
  fi
  if verify "$root/deploy/systemd/tracehealth-agent.service" tracehealth-agent.service.d \
       "$root/deploy/examples/tracehealth-agent.service.d/gate-socket.conf"; then
    echo "PASS systemd-analyze verify agent gate-socket drop-in"
  else
    echo "FAIL systemd-analyze verify agent gate-socket drop-in"; fail=1
  fi
else
  echo "SKIP systemd-analyze (not installed)"
fi

# The drop-in's ExecStartPre is a gate invocation tracehealthctl accepts (not
# a usage error), here against the lockup fixture: its tcp_* functions
# (183 of 2000) as kprobe_multi return probes walk 240,000 threads: exit 1.
cmd=$(sed -n 's|^ExecStartPre=/usr/bin/tracehealthctl ||p' \
  "$root/deploy/examples/bpf-agent.service.d/10-tracehealth-gate.conf")
# shellcheck disable=SC2086  # the unit's words, as systemd splits them
expect "ExecStartPre's command line" 1 "" "" -- \
  bash -c 'set -f; "$0" $1 --root="$2" >/dev/null; exit $?' \
  "$TRACEHEALTHCTL" "$cmd" "$lockup"
exit $fail
