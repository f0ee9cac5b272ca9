#!/usr/bin/env bash
# The lab: Debian's cloud kernel under qemu with the agent in a busybox
# initramfs (tests/lab/README.md).
#   run_lab.sh [--out DIR]
# Scenario A: the agent's fgraph prediction before and after --calibrate at
# CAL threads (three calibrations, the lowest c_visit used), against
# function_graph enables timed in the guest at each N (the shortest of
# MREPS, fresh threads each); fails when a calibrated prediction at
# 2*CAL <= N < 3*CAL is off the measurement by more than 25 % (rows at
# N >= 3*CAL are printed, not checked; a row whose MREPS enables differ by
# more than 25 % from each other is printed as not judged). Scenario B
# (preempt=none watchdog_thresh=1 rcupdate.rcu_cpu_stall_timeout=120,
# B_THREADS idle threads, calibrated at B_CAL): the enable's soft lockup must reach the server, attributed to
# fgraph and counted as predicted.
# Skips (exit 0, "lab: SKIPPED: reason") without qemu-system-x86_64, a
# static busybox, gcc or the kernel package. Environment:
#   TRACEHEALTH_LAB=0                   skip
#   TRACEHEALTH_LAB_ACCEL=auto|kvm|tcg  auto: KVM when /dev/kvm opens, the
#                                       kernel prints its banner under KVM
#                                       in 10 s and a probe boot reaches
#                                       /init in 30 s, else TCG
#   TRACEHEALTH_LAB_CACHE=DIR           kernel package cache
#                                       (default ~/.cache/tracehealth-lab)
#   TRACEHEALTH_LAB_SCENARIOS="A B"     which scenarios
#   TRACEHEALTH_LAB_CAL, _NS, _REPS, _MREPS, _B_THREADS, _B_CAL
#                                       16384; 8192,32768,49152; 3; 2;
#                                       49152; 4096
set -uo pipefail
cd "$(dirname "$0")/../.."
here=tests/lab

out=""
if [[ ${1:-} == --out ]]; then out=$2; fi
[[ -n $out ]] || out=$(mktemp -d -t tracehealth-lab.XXXXXX)
mkdir -p "$out"

skip() { echo "lab: SKIPPED: $*"; exit 0; }
fail() { echo "lab: FAILED: $*"; exit 1; }

[[ ${TRACEHEALTH_LAB:-1} != 0 ]] || skip "TRACEHEALTH_LAB=0"
command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 not installed (deploy/setup.sh installs qemu-system-x86)"
[[ -x /bin/busybox ]] && ! ldd /bin/busybox >/dev/null 2>&1 || skip "no static /bin/busybox (busybox-static)"
command -v gcc >/dev/null || skip "no gcc for the guest helper"

cal=${TRACEHEALTH_LAB_CAL:-16384}
ns=${TRACEHEALTH_LAB_NS:-8192,32768,49152}
reps=${TRACEHEALTH_LAB_REPS:-3}     # calibrations (the lowest c_visit is used)
mreps=${TRACEHEALTH_LAB_MREPS:-2}   # timed enables per N (the shortest counts)
b_cal=${TRACEHEALTH_LAB_B_CAL:-4096}
b_threads=${TRACEHEALTH_LAB_B_THREADS:-49152}
# One function the guest's tracing never calls on its own: the filter the
# calibration and the timed enables share.
filter=ksys_sync
start=$(date +%s)

# --- the kernel: Debian's linux-image-cloud-amd64, fetched, never installed
cache=${TRACEHEALTH_LAB_CACHE:-$HOME/.cache/tracehealth-lab}
mkdir -p "$cache"
image=$(apt-cache depends linux-image-cloud-amd64 2>/dev/null \
  | sed -n 's/^ *Depends: \(linux-image-[0-9].*-cloud-amd64\)$/\1/p' | head -n 1)
kdir=""
if [[ -n $image ]]; then
  kdir=$cache/$image
  if [[ ! -d $kdir/boot ]]; then
    tmp=$(mktemp -d "$cache/download.XXXXXX")
    if (cd "$tmp" && apt-get download -q "$image" >/dev/null 2>&1) \
        && dpkg-deb -x "$tmp"/*.deb "$tmp/x"; then
      mv "$tmp/x" "$kdir"
    fi
    rm -rf "$tmp"
  fi
fi
if [[ -z $kdir || ! -d $kdir/boot ]]; then
  # Offline: the newest kernel already in the cache, if any.
  kdir=$(ls -d "$cache"/linux-image-*-cloud-amd64 2>/dev/null | sort -V | tail -n 1)
fi
[[ -n $kdir && -d $kdir/boot ]] || skip "linux-image-cloud-amd64 could not be downloaded (no mirror?) and none is cached in $cache"
vmlinuz=$(ls "$kdir"/boot/vmlinuz-* | head -n 1)
config=$(ls "$kdir"/boot/config-* | head -n 1)
for opt in CONFIG_FUNCTION_GRAPH_TRACER=y CONFIG_PREEMPT_DYNAMIC=y; do
  grep -qx "$opt" "$config" || fail "$config lacks $opt"
done
echo "lab: kernel $(basename "$vmlinuz") ($(grep -E '^CONFIG_PREEMPT_(NONE|VOLUNTARY|)=y' "$config" | tr '\n' ' ')default)"

# --- the guest's programs and initramfs
bins=(bazel-bin/agent/tracehealth-agent bazel-bin/server/tracehealth-server
      bazel-bin/tools/tracehealthctl/tracehealthctl)
bazel build //agent:tracehealth-agent //server:tracehealth-server \
  //tools/tracehealthctl 2>&1 | tail -n 1
for b in "${bins[@]}"; do [[ -x $b ]] || fail "$b not built"; done
bash "$here/make_initramfs.sh" "$out/initramfs.gz" "$config" "${bins[@]}" \
  || fail "initramfs"

# boot LOG TIMEOUT_S MEM ACCEL CMDLINE...: one guest, serial console to LOG.
boot() {
  local log=$1 limit=$2 mem=$3 accel=$4
  shift 4
  timeout "$limit" qemu-system-x86_64 -accel "$accel" -m "$mem" -smp 2 \
    -nographic -no-reboot -kernel "$vmlinuz" -initrd "$out/initramfs.gz" \
    -append "console=ttyS0 panic=-1 quiet lab.filter=$filter $*" \
    < /dev/null > "$log" 2>&1
  local rc=$?
  tr -d '\r' < "$log" > "$log.txt"
  grep -q '^LAB done rc=0' "$log.txt" || { echo "lab: boot ($*) rc=$rc, log $log.txt:"; grep -a '^LAB\|BUG\|panic' "$log.txt" | tail -n 20; return 1; }
}

# Whether the kernel prints its banner under KVM within 10 s (no initramfs,
# not quiet; qemu stopped as soon as it does). Where /dev/kvm opens but KVM
# cannot run this guest (nested virtualisation), the guest hangs silently
# after the firmware: this answers in 10 s instead of the 30 s boot probe.
kernel_starts_under_kvm() {
  local log=$out/kvm-banner.log pid i
  qemu-system-x86_64 -accel kvm -m 512M -smp 1 -nographic -no-reboot \
    -kernel "$vmlinuz" -append "console=ttyS0 panic=-1" </dev/null >"$log" 2>&1 &
  pid=$!
  for ((i = 0; i < 20; i++)); do
    grep -aq "Linux version" "$log" && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.5
  done
  kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
  grep -aq "Linux version" "$log"
}

accel=${TRACEHEALTH_LAB_ACCEL:-auto}
if [[ $accel == auto ]]; then
  accel=tcg
  if [[ -r /dev/kvm && -w /dev/kvm ]]; then
    if ! kernel_starts_under_kvm; then
      echo "lab: /dev/kvm opens but the kernel printed nothing under KVM in 10 s: TCG"
    elif boot "$out/probe.log" 30 1G kvm lab.scenario=smoke lab.n=64 >/dev/null; then
      accel=kvm
    else
      echo "lab: /dev/kvm opens but a KVM guest did not reach /init in 30 s: TCG"
    fi
  else
    echo "lab: /dev/kvm not usable: TCG"
  fi
fi
echo "lab: accelerator $accel"

scenarios=${TRACEHEALTH_LAB_SCENARIOS:-A B}
a_rc=0 b_rc=0
if [[ $scenarios == *A* ]]; then
# --- scenario A
a0=$(date +%s)
boot "$out/a.log" 480 6G "$accel" lab.scenario=A lab.cal="$cal" lab.ns="$ns" lab.reps="$reps" lab.mreps="$mreps" \
  || fail "scenario A did not finish"
echo "lab: scenario A $(( $(date +%s) - a0 )) s"
grep '^LAB \(boot\|calibrat\|note\|threads\)' "$out/a.log.txt"

# The table: N, predicted before, after calibration, measured, ratio.
awk -v cal="$cal" -v accel="$accel" '
  function field(sec, name,   m) {
    if (match(sec, name "=[0-9.e+-]+")) return substr(sec, RSTART + length(name) + 1, RLENGTH - length(name) - 1)
    return ""
  }
  /^LAB row / {
    n = field($0, "n") + 0
    split($0, parts, / (uncal|cal|measured): /)
    u = field(parts[2], "latency_seconds"); c = field(parts[3], "latency_seconds")
    m = field(parts[4], "first_ms"); m2 = field(parts[4], "second_ms")
    v = field(parts[2], "visits"); nt = field(parts[2], "threads_total")
    # Per visit: the first enable less the second (one pass over every
    # thread, all with stacks), over the visits the first made beyond it.
    pv = (m == "" || v - nt <= 0) ? "-" : sprintf("%.0f", (m - m2) * 1e6 / (v - nt))
    rows[++k] = sprintf("| %6d | %9.1f | %9s | %9s | %6s | %s | %s |", n, u * 1000,
      c == "" ? "-" : sprintf("%.1f", c * 1000), m == "" ? "(calibration)" : sprintf("%.1f", m),
      (c == "" || m == "") ? "-" : sprintf("%.2f", m / (c * 1000)),
      m2 == "" ? "-" : sprintf("%.1f", m2), pv)
    # Checked: 2*CAL <= N < 3*CAL. Beyond, the row is printed only: the
    # cost per visit keeps growing with N and the 25 % target is not held
    # there (tests/RELIABILITY.md, "A real kernel").
    if (c != "" && m != "" && n >= 3 * cal) unchecked = unchecked " " n
    # A measurement whose own repetitions spread by more than the target
    # (the emulator shared the host with other work) cannot judge it: the
    # row is printed and named, not counted either way.
    spread = 1
    if (match(parts[4], "all_first_ms=[0-9.,]+")) {
      na = split(substr(parts[4], RSTART + 13, RLENGTH - 13), all, ",")
      lo = all[1] + 0; hi = lo
      for (j = 2; j <= na; j++) { x = all[j] + 0; if (x < lo) lo = x; if (x > hi) hi = x }
      if (lo > 0) spread = hi / lo
    }
    if (c != "" && m != "" && n >= 2 * cal && n < 3 * cal) {
      r = m / (c * 1000)
      if (spread > 1.25) { unjudged = unjudged sprintf(" %d (enables spread %.2fx)", n, spread) }
      else { checked++; if (r < 0.75 || r > 1.25) { bad++; miss = miss " " n } }
    }
    if (m != "" && c == "") uncal_only++
  }
  END {
    print "| N | predicted before calibration (ms) | predicted after (ms) | measured first enable (ms) | measured / after | second enable (ms) | measured per visit (ns) |"
    print "|---:|---:|---:|---:|---:|---:|---:|"
    for (i = 1; i <= k; i++) print rows[i]
    print "accelerator " accel ", calibration at N=" cal
    if (uncal_only) { print "lab: A: no calibrated prediction (the agent has no --calibrate)"; exit 2 }
    if (unjudged != "") print "lab: A: not judged, the measurement itself spread by more than 25 %:" unjudged
    if (!checked && unjudged != "") { print "lab: A: NOT JUDGED: no steady measurement at 2*" cal " <= N < 3*" cal; exit 0 }
    if (!checked) { print "lab: A: no row at 2*" cal " <= N < 3*" cal; exit 2 }
    if (unchecked != "") print "lab: A: not checked (N >= 3*" cal "):" unchecked
    if (bad) { print "lab: A: calibrated prediction off by more than 25 % at N =" miss; exit 1 }
    print "lab: A: calibrated prediction within 25 % at 2*" cal " <= N < 3*" cal " (" checked " rows)"
  }' "$out/a.log.txt" | tee "$out/table.md"
a_rc=${PIPESTATUS[0]}
fi

# --- scenario B
b0=$(date +%s)
if [[ $scenarios != *B* ]]; then
  :
elif boot "$out/b.log" 420 6G "$accel" preempt=none watchdog_thresh=1 rcupdate.rcu_cpu_stall_timeout=120 \
    lab.scenario=B lab.cal="$b_cal" lab.b_threads="$b_threads"; then
  echo "lab: scenario B $(( $(date +%s) - b0 )) s"
  grep "^LAB \(boot\|calibrate\|note\|threads\|row\|enable\|poll\|lockup\|kmsg\|agentlog\|events\|metric\)" "$out/b.log.txt"
  if grep -q '^LAB metric tracehealth_observed_events_total{.*kind="soft_lockup".*model="fgraph".*predicted="yes".*} [1-9]' "$out/b.log.txt"; then
    echo "lab: B: soft lockup observed, attributed to fgraph, counted as predicted"
  else
    echo "lab: B: no soft lockup counted as fgraph, predicted=yes"; b_rc=1
  fi
else
  b_rc=1
fi

echo "lab: total $(( $(date +%s) - start )) s, results in $out"
[[ $a_rc == 0 && $b_rc == 0 ]] || fail "scenario A rc=$a_rc, scenario B rc=$b_rc"
echo "lab: PASSED"
