#!/usr/bin/env bash
# The lab: Debian's cloud kernel under qemu with the agent in a busybox
# initramfs (tests/lab/README.md).
#   run_lab.sh [--out DIR]
# Scenario A: the agent's fgraph prediction before and after --calibrate at
# CAL threads, against function_graph enables timed in the guest at each N
# (fresh threads each), in REPS rounds of one calibration followed by one
# enable at each N priced with it; fails when the median over the rounds of
# measured / calibrated prediction at 2*CAL <= N < 3*CAL is off by more
# than 25 % (every row's ratio is printed; rows at N < 2*CAL or N >= 3*CAL
# are not checked; a row measured in one round only, whose shortest
# enable no other round comes within 25 % of, or whose rounds' calibrated
# predictions are more than 25 % apart, is printed as not judged;
# rounds that would not fit A's time budget are skipped; a guest stopped
# at the time limit outside a timed enable is booted once more, its last
# stall report printed). Scenario B
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
#   TRACEHEALTH_LAB_SCENARIOS="A B"     which scenarios (S: the study,
#                                       run_study.sh)
#   TRACEHEALTH_LAB_KERNEL=NAME         a kernel of kernels.txt
#                                       (fetch_kernel.sh) instead of
#                                       Debian 12's linux-image-cloud-amd64
#   TRACEHEALTH_LAB_A_KIND=function_graph|kprobe_multi_return
#                                       what scenario A predicts and times
#                                       (the calibration is always
#                                       function_graph's)
#   TRACEHEALTH_LAB_CAL, _NS, _NS_ONCE, _REPS, _A_BUDGET, _B_THREADS,
#   _B_CAL                              32768; 16384,65536; none (N in the
#                                       first round only); 3; 480 s; 49152;
#                                       4096
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

# Calibrated at 32,768 threads: on this emulator the cost of a visit steps up
# between 16k and 32k tasks (tests/RELIABILITY.md, "The study"), and a
# calibration below the step prices N beyond it about 1.5x low (the model's
# one constant per visit cannot see a step above its calibration); the check
# at 2*CAL is made beyond the step.
cal=${TRACEHEALTH_LAB_CAL:-32768}
ns=${TRACEHEALTH_LAB_NS:-16384,65536}
ns_once=${TRACEHEALTH_LAB_NS_ONCE:-none}  # N measured in the first round only
reps=${TRACEHEALTH_LAB_REPS:-3}     # rounds: a calibration, then one enable per N
# Seconds scenario A's guest may spend: a round starts only when it fits
# (the guest is stopped 240 s after it, whatever it is doing).
a_budget=${TRACEHEALTH_LAB_A_BUDGET:-480}
b_cal=${TRACEHEALTH_LAB_B_CAL:-4096}
b_threads=${TRACEHEALTH_LAB_B_THREADS:-49152}
# One function the guest's tracing never calls on its own: the filter the
# calibration and the timed enables share.
filter=ksys_sync
start=$(date +%s)

# --- the kernel: Debian's linux-image-cloud-amd64, fetched, never installed
cache=${TRACEHEALTH_LAB_CACHE:-$HOME/.cache/tracehealth-lab}
mkdir -p "$cache"
a_kind=${TRACEHEALTH_LAB_A_KIND:-function_graph}
if [[ -n ${TRACEHEALTH_LAB_KERNEL:-} ]]; then
  f=$(bash "$here/fetch_kernel.sh" "$TRACEHEALTH_LAB_KERNEL") \
    || skip "$(echo "$f" | tail -n 1)"
  vmlinuz=$(echo "$f" | sed -n 's/^vmlinuz=//p')
  config=$(echo "$f" | sed -n 's/^config=//p')
else
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
fi
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

# last_step LOG: the guest's last progress line in LOG.
last_step() {
  grep -a '^LAB \(step\|threads\|row\|calibrate\|note\)' "$1" | tail -n 1
}

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
  grep -q '^LAB done rc=0' "$log.txt" || {
    echo "lab: boot ($*) rc=$rc, log $log.txt:"
    # The first and the last stall or lockup report, each with its
    # registers and call trace where the console shows them: what the
    # stuck CPU was doing when it stalled first and when it was stopped.
    awk '/soft lockup|rcu_.*detected stall|blocked for more than/ { n++; k = 0; on = 1; if (n > 1) last = "" }
         on && k < 60 { line = "lab: trace " (n == 1 ? "first" : "last") ": " $0 "\n"
                        if (n == 1) first = first line; else last = last line
                        if (++k >= 60 || /<\/TASK>/) on = 0 }
         END { printf "%s%s", first, last }' "$log.txt"
    # The guest's progress last, where a summary of the tail shows it.
    grep -a '^LAB\|BUG\|panic' "$log.txt" | tail -n 12
    echo "lab: last guest step: $(last_step "$log.txt")"
    return 1
  }
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
    grep -aqs "Linux version" "$log" && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.5
  done
  kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
  grep -aqs "Linux version" "$log"
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
a_limit=$(( a_budget + 240 ))
boot_a() {
  boot "$1" "$a_limit" 6G "$accel" lab.scenario=A lab.cal="$cal" lab.ns="$ns" lab.ns_once="$ns_once" \
    lab.reps="$reps" lab.budget_s="$a_budget" lab.a_kind="$a_kind"
}
a_log=$out/a.log
if ! boot_a "$a_log"; then
  # A guest stopped at the time limit while it was not timing an enable
  # (starting or ending threads, a prediction, a calibration) measured
  # nothing wrong: it is booted once more, and its stall report is above.
  # A guest that reported an error, or was stopped inside a timed enable
  # (an enable that outlasts the scenario is a result), fails.
  last=$(last_step "$a_log.txt")
  if grep -aq '^LAB done' "$a_log.txt"; then
    fail "scenario A: the guest failed (log $a_log.txt)"
  elif [[ $last == "LAB step enable"* ]]; then
    fail "scenario A did not finish in $a_limit s (its budget $a_budget s): stopped in a timed enable ($last)"
  fi
  echo "lab: A: the guest did not finish in $a_limit s, stopped outside a timed enable (last step: ${last:-none}): booting it once more"
  a_log=$out/a2.log
  boot_a "$a_log" || fail "scenario A did not finish in $a_limit s (its budget $a_budget s), twice"
fi
echo "lab: scenario A $(( $(date +%s) - a0 )) s"
grep '^LAB \(boot\|calibrat\|note\|threads\)' "$a_log.txt"

# The table: N, predicted before, after calibration (each round's),
# measured (each round's), their ratios and the median ratio.
awk -v cal="$cal" -v accel="$accel" -v kind="${TRACEHEALTH_LAB_KERNEL:-$(basename "$vmlinuz")}, $a_kind" '
  function field(sec, name,   m) {
    if (match(sec, "(^| )" name "=[0-9.e+-]+")) {
      m = substr(sec, RSTART, RLENGTH); sub(/^ /, "", m)
      return substr(m, length(name) + 2)
    }
    return ""
  }
  # sort_values(a, k): a[1..k] in ascending order.
  function sort_values(a, k,   i, j, x) {
    for (i = 2; i <= k; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
  }
  /^LAB row / && /role=measured/ {
    n = field($0, "n") + 0
    split($0, parts, / (uncal|cal|measured): /)
    u = field(parts[2], "latency_seconds"); c = field(parts[3], "latency_seconds")
    m = field(parts[4], "first_ms"); m2 = field(parts[4], "second_ms")
    pr = c != "" ? parts[3] : parts[2]
    if (!(n in seen)) { seen[n] = 1; order[++k] = n }
    if (u != "") before[n] = u
    i = ++cnt[n]
    meas[n, i] = m; pred[n, i] = c; sec[n, i] = m2
    if (field(pr, "visits") != "") { visits[n] = field(pr, "visits"); tt[n] = field(pr, "threads_total") }
  }
  END {
    print "| N | predicted before calibration (ms) | predicted after, each round (ms) | measured first enable, each round (ms) | measured / after, each round | median ratio | shortest second enable (ms) | measured per visit (ns) |"
    print "|---:|---:|---:|---:|---:|---:|---:|---:|"
    for (o = 1; o <= k; o++) {
      n = order[o]; nr = 0; nm = 0; ps = ""; ms = ""; rs = ""; s2 = ""; pmin = ""; pmax = ""
      for (i = 1; i <= cnt[n]; i++) {
        ms = ms (i > 1 ? " / " : "") sprintf("%.1f", meas[n, i])
        mv[++nm] = meas[n, i] + 0
        if (s2 == "" || sec[n, i] + 0 < s2 + 0) s2 = sec[n, i]
        if (pred[n, i] != "" && (pmin == "" || pred[n, i] + 0 < pmin + 0)) pmin = pred[n, i]
        if (pred[n, i] != "" && (pmax == "" || pred[n, i] + 0 > pmax + 0)) pmax = pred[n, i]
        if (pred[n, i] == "") { ps = ps (i > 1 ? " / " : "") "-"; rs = rs (i > 1 ? " / " : "") "-"; continue }
        r = meas[n, i] / (pred[n, i] * 1000)
        ps = ps (i > 1 ? " / " : "") sprintf("%.1f", pred[n, i] * 1000)
        rs = rs (i > 1 ? " / " : "") sprintf("%.2f", r)
        rv[++nr] = r
      }
      sort_values(mv, nm); sort_values(rv, nr)
      med = nr == 0 ? "" : (nr % 2 ? rv[(nr + 1) / 2] : (rv[nr / 2] + rv[nr / 2 + 1]) / 2)
      # Per visit: the shortest first enable less the shortest second (one
      # pass over every thread, all with stacks), over the visits the first
      # made beyond it.
      pv = (visits[n] == "" || visits[n] - tt[n] <= 0) ? "-" : sprintf("%.0f", (mv[1] - s2) * 1e6 / (visits[n] - tt[n]))
      printf "| %6d | %9.1f | %s | %s | %s | %s | %s | %s |\n", n, before[n] * 1000, ps, ms, rs,
        med == "" ? "-" : sprintf("%.2f", med), s2 == "" ? "-" : sprintf("%.1f", s2), pv
      # A measurement whose shortest enable no other round comes within
      # 25 % of (the emulator shared the host with other work) cannot judge
      # a 25 % target: the row is printed and named, not counted either way.
      steady = nm >= 2 && mv[2] <= 1.25 * mv[1]
      why = ""
      if (med == "") why = "no calibrated prediction"
      else if (n < 2 * cal) why = "not checked: N < 2*CAL"
      # Beyond 3*CAL the cost per visit keeps growing with N and the 25 %
      # target is not held there (tests/RELIABILITY.md, "A real kernel").
      else if (n >= 3 * cal) why = "not checked: N >= 3*CAL"
      else if (nm < 2) { why = "NOT JUDGED: one round only"; unjudged++ }
      else if (!steady) { why = sprintf("NOT JUDGED: its two shortest enables %.2fx apart", mv[2] / mv[1]); unjudged++ }
      # The same for the other side of the ratio: calibrations (timed
      # enables too) whose predictions spread by more than 25 % cannot
      # judge a 25 % target either.
      else if (pmax + 0 > 1.25 * pmin) { why = sprintf("NOT JUDGED: the calibrated predictions of its rounds %.2fx apart", pmax / pmin); unjudged++ }
      else { why = "judged"; checked++; if (med < 0.75 || med > 1.25) { bad++; miss = miss " " n } }
      if (med == "" && n >= 2 * cal && n < 3 * cal) uncal_only++
      summary = summary sprintf("%s %d %s (%s)", summary == "" ? "" : ",", n, med == "" ? "-" : sprintf("%.2f", med), why)
    }
    print "accelerator " accel ", calibration at N=" cal ", " kind
    print "lab: A: measured / calibrated prediction, median of the rounds, by N:" summary
    if (uncal_only) { print "lab: A: no calibrated prediction at 2*" cal " <= N < 3*" cal; exit 2 }
    if (!checked && unjudged) { print "lab: A: NOT JUDGED: no steady measurement at 2*" cal " <= N < 3*" cal; exit 0 }
    if (!checked) { print "lab: A: no row at 2*" cal " <= N < 3*" cal; exit 2 }
    if (bad) { print "lab: A: calibrated prediction off by more than 25 % at N =" miss; exit 1 }
    print "lab: A: calibrated prediction within 25 % at 2*" cal " <= N < 3*" cal " (" checked " rows)"
  }' "$a_log.txt" | tee "$out/table.md"
a_rc=${PIPESTATUS[0]}
fi

# --- scenario S (the study, tests/lab/run_study.sh): not in the default set
s_rc=0
if [[ $scenarios == *S* ]]; then
  s0=$(date +%s)
  if boot "$out/s.log" "${TRACEHEALTH_STUDY_LIMIT:-5400}" "${TRACEHEALTH_STUDY_MEM:-12G}" "$accel" \
      lab.scenario=S lab.ns="${TRACEHEALTH_STUDY_NS:-8192,16384,32768,65536,131072}" \
      lab.per="${TRACEHEALTH_STUDY_PER:-8}" lab.reps="${TRACEHEALTH_STUDY_REPS:-1}" \
      lab.layouts="${TRACEHEALTH_STUDY_LAYOUTS:-one,many}" lab.chase="${TRACEHEALTH_STUDY_CHASE:-0}"; then
    echo "lab: study $(( $(date +%s) - s0 )) s, accelerator $accel"
    grep '^LAB \(boot\|threads\|study\|chase\)' "$out/s.log.txt"
    awk -v B=32 -f "$here/study_fit.awk" "$out/s.log.txt" | tee "$out/study.md"
  else
    s_rc=1
  fi
fi

# --- scenario C (the user-space walk alone): not in the default set
if [[ $scenarios == *C* ]]; then
  boot "$out/c.log" 900 8G "$accel" lab.scenario=C \
      lab.ns="${TRACEHEALTH_CHASE_NS:-8192,16384,32768,65536,131072}" \
      lab.strides="${TRACEHEALTH_CHASE_STRIDES:-10240}" || s_rc=1
  grep -a '^LAB chase' "$out/c.log.txt"
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
[[ $a_rc == 0 && $b_rc == 0 && $s_rc == 0 ]] || fail "scenario A rc=$a_rc, scenario B rc=$b_rc, study rc=$s_rc"
echo "lab: PASSED"
