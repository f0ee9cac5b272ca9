#!/usr/bin/env bash
# The kernel matrix (tests/lab/README.md, "The kernel matrix"): every kernel
# of tests/lab/kernels.txt booted under qemu with the agent and
# guest/lab_attach, one at a time.
#   run_matrix.sh [--out DIR]
# An arm64 kernel (flavour *arm64*) boots under qemu-system-aarch64 -M virt
# -cpu max (TCG) with the cross-built agent (bazel build --config=arm64),
# Debian's arm64 busybox-static and the helpers built with
# aarch64-linux-gnu-gcc (make_initramfs.sh --arch arm64); without those
# parts it is skipped with the reason.
# Per kernel: the agent's --once report (its config source, preemption and
# per probe kind whether the attach walks the threads: uses_fgraph), then
# for each N of NS and each probe kind, N fresh idle threads and a timed
# first attach, detach, second attach, detach (scenario M of
# guest/lab_scenarios.sh). Prints one table row per kernel and kind.
#
# The check, per kernel and kind (NLO and NHI the smallest and largest N;
# NHI >= 4 * NLO). Where the guest measured what the first attach at NHI
# left allocated (MemFree), that decides: a walk hands every thread a
# shadow stack, so walks when it is at least 1 KiB a thread, else no walk
# (the times printed beside it). Otherwise, from the times:
#   observed walk     first(NHI) / second(NHI) >= 3 and
#                     first(NHI) / first(NLO) >= 2
#   observed no walk  first(NHI) / second(NHI) < 3 (a first attach that
#                     grows with N as much as the second is the guest
#                     slowed by the host, not a walk)
#   unclear           first(NHI) / second(NHI) >= 3 without the growth (a
#                     one-off cost; printed and listed, not judged)
#   refused           the kernel refused the attach (errno, at any N)
# Second users (TRACEHEALTH_MATRIX_SECOND, at NHI with function_graph the
# top-level tracer; second:function_graph in a tracefs instance): the agent,
# read while function_graph is on, says busy (refused: before 6.11), one
# pass (another fgraph user, 6.11+) or no walk; busy must be refused, the
# others attached, and one pass, for a kind that walks as the first user,
# at most the geometric mean of that user's first and second attach.
# A disagreement (exit 1): a walk observed where the agent predicts none or
# the reverse; a kind the agent calls unavailable that attaches, or one it
# calls available that the kernel refuses; a kernel whose config the agent
# did not find; a preemption mode the agent reports other than the one the
# kernel runs, a page size other than the kernel's, or (where both walk) a
# shadow stack a thread more than 25 % from what the first attach left
# allocated a thread (matrix_table.awk). Kernels fetch_kernel.sh cannot provide are skipped with the
# reason; exit 0 when every kernel is skipped ("matrix: SKIPPED: reason").
# Environment:
#   TRACEHEALTH_MATRIX="NAME ..."     a subset of kernels.txt (default all)
#   TRACEHEALTH_MATRIX_NS=4096,16384  thread counts
#   TRACEHEALTH_MATRIX_REPS=1         runs per cell, each with fresh
#                                     threads (the shortest first and
#                                     second attach are kept)
#   TRACEHEALTH_MATRIX_KINDS=...      probe kinds (lab_attach's names;
#                                     default all seven)
#   TRACEHEALTH_MATRIX_SECOND=function_graph,kprobe_multi_return
#                                     kinds attached at NHI as a second
#                                     fgraph user, function_graph on ("none":
#                                     no such cells)
#   TRACEHEALTH_MATRIX_TIMEOUT=1200   seconds per kernel
#   TRACEHEALTH_MATRIX_CMDLINE="..."  added to every kernel's command line
#                                     (e.g. preempt=none: the agent must
#                                     report the mode the kernel then runs)
#   TRACEHEALTH_LAB_ACCEL=tcg|kvm     default tcg (see README, Accelerator)
#   TRACEHEALTH_LAB_CACHE=DIR         kernel cache (fetch_kernel.sh)
# Each guest runs under nice -n 19: the emulator yields to other work.
set -uo pipefail
cd "$(dirname "$0")/../.."
here=tests/lab

out=""
if [[ ${1:-} == --out ]]; then out=$2; fi
[[ -n $out ]] || out=$(mktemp -d -t tracehealth-matrix.XXXXXX)
mkdir -p "$out"

skip() { echo "matrix: SKIPPED: $*"; exit 0; }
fail() { echo "matrix: FAILED: $*"; exit 1; }

command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 not installed (deploy/setup.sh installs qemu-system-x86)"
[[ -x /bin/busybox ]] && ! ldd /bin/busybox >/dev/null 2>&1 || skip "no static /bin/busybox (busybox-static)"
command -v gcc >/dev/null || skip "no gcc for the guest helpers"

ns=${TRACEHEALTH_MATRIX_NS:-4096,16384}
reps=${TRACEHEALTH_MATRIX_REPS:-1}
kinds=${TRACEHEALTH_MATRIX_KINDS:-function_graph,kprobe_multi,kprobe_multi_return,kprobe_session,fprobe,fprobe_return,kretprobe}
second=${TRACEHEALTH_MATRIX_SECOND:-function_graph,kprobe_multi_return}
limit=${TRACEHEALTH_MATRIX_TIMEOUT:-1200}
extra=${TRACEHEALTH_MATRIX_CMDLINE:-}
accel=${TRACEHEALTH_LAB_ACCEL:-tcg}
filter=ksys_sync
all=$(grep -v '^#' "$here/kernels.txt" | awk 'NF { print $1 }')
names=${TRACEHEALTH_MATRIX:-$all}
for k in $names; do
  grep -qx "$k" <<<"$all" || fail "$k is not a NAME in $here/kernels.txt"
done

bazel build --jobs=2 //agent:tracehealth-agent 2>&1 | tail -n 1
agent=$(bazel info bazel-bin 2>/dev/null)/agent/tracehealth-agent
[[ -x $agent ]] || fail "$agent not built"
# arm64_parts: why the arm64 kernels cannot run here (empty when they can);
# builds the arm64 agent into $agent_arm64 the first time.
arm64_why=unchecked agent_arm64=""
arm64_parts() {
  [[ $arm64_why == unchecked ]] || return 0
  arm64_why=""
  command -v qemu-system-aarch64 >/dev/null || { arm64_why="no qemu-system-aarch64 (package qemu-system-arm)"; return 0; }
  command -v aarch64-linux-gnu-gcc >/dev/null || { arm64_why="no aarch64-linux-gnu-gcc (package gcc-aarch64-linux-gnu)"; return 0; }
  bash deploy/arm64/sysroot.sh >/dev/null 2>"$out/sysroot.err" \
    || { arm64_why="the arm64 sysroot: $(tail -n 1 "$out/sysroot.err")"; return 0; }
  bash "$here/fetch_guest_arm64.sh" >"$out/busybox-arm64" \
    || { arm64_why="$(cat "$out/busybox-arm64")"; return 0; }
  bazel build --config=arm64 --jobs=2 //agent:tracehealth-agent 2>&1 | tail -n 1
  agent_arm64=$(bazel info --config=arm64 bazel-bin 2>/dev/null)/agent/tracehealth-agent
  [[ -x $agent_arm64 ]] || arm64_why="the arm64 agent did not build"
}

start=$(date +%s)
table=$out/table.md
echo "| kernel | flavour | preemption: default (offered) | probe kind | walks: predicted | observed | first / second attach at each N (ms) | shadow stack a thread, bytes: predicted / measured | |" > "$table"
echo "|---|---|---|---|---|---|---|---|---|" >> "$table"
booted=0 skipped="" bad=0 unclear=""
for k in $names; do
  flavour=$(awk -v n="$k" '$1 == n { print $5 }' "$here/kernels.txt")
  f=$(bash "$here/fetch_kernel.sh" "$k")
  if [[ $? != 0 ]]; then
    echo "matrix: $k: ${f#SKIPPED: $k: }"
    skipped="$skipped $k"
    continue
  fi
  vmlinuz=$(sed -n 's/^vmlinuz=//p' <<<"$f")
  config=$(sed -n 's/^config=//p' <<<"$f")
  case $flavour in
    *arm64*)
      arm64_parts
      if [[ -n $arm64_why ]]; then
        echo "matrix: $k: $arm64_why"
        skipped="$skipped $k"
        continue
      fi
      bash "$here/make_initramfs.sh" --arch arm64 "$out/$k.cpio.gz" "$config" "$agent_arm64" \
        || fail "$k: initramfs"
      # virt's UART is a PL011; TCG only (an x86-64 host).
      emulator=(qemu-system-aarch64 -M virt -cpu max -accel tcg) console=ttyAMA0
      ;;
    *)
      bash "$here/make_initramfs.sh" "$out/$k.cpio.gz" "$config" "$agent" \
        || fail "$k: initramfs"
      emulator=(qemu-system-x86_64 -accel "$accel") console=ttyS0
      ;;
  esac
  k0=$(date +%s)
  log=$out/$k.log
  nice -n 19 timeout "$limit" "${emulator[@]}" -m 3G -smp 2 \
    -nographic -no-reboot -kernel "$vmlinuz" -initrd "$out/$k.cpio.gz" \
    -append "console=$console panic=-1 quiet lab.scenario=M lab.filter=$filter lab.ns=$ns lab.reps=$reps lab.kinds=$kinds lab.second_kinds=$second${extra:+ $extra}" \
    < /dev/null > "$log" 2>&1
  rc=$?
  tr -d '\r' < "$log" > "$log.txt"
  secs=$(( $(date +%s) - k0 ))
  if ! grep -q '^LAB done rc=0' "$log.txt"; then
    echo "matrix: $k: the guest did not finish (qemu rc=$rc after $secs s), log $log.txt:"
    grep -a '^LAB\|BUG\|panic\|Kernel' "$log.txt" | tail -n 20
    bad=$(( bad + 1 ))
    continue
  fi
  booted=$(( booted + 1 ))
  echo "matrix: $k: $secs s ($(grep -m1 '^LAB agent' "$log.txt" | cut -d' ' -f3-))"
  awk -v kernel="$k${extra:+ ($extra)}" -v flavour="$flavour" -v ns="$ns" -v cfg="$config" -f "$here/matrix_table.awk" \
    "$log.txt" > "$out/$k.rows"
  r=$?
  grep '^|' "$out/$k.rows" | tee -a "$table"
  grep -v '^|' "$out/$k.rows"
  [[ $r == 0 ]] || bad=$(( bad + 1 ))
done

echo "matrix: accelerator $accel, N = $ns, $reps run(s) per cell, $booted kernel(s) in $(( $(date +%s) - start )) s, table $table"
[[ $booted -gt 0 || $bad -gt 0 ]] || skip "no kernel could be fetched:$skipped"
[[ -z $skipped ]] || echo "matrix: skipped:$skipped"
[[ $bad == 0 ]] || fail "$bad kernel(s) with a disagreement or no result"
echo "matrix: PASSED"
