#!/bin/busybox sh
# The lab guest's /init. Reads its scenario from the kernel command line
# (lab.scenario=smoke|A|B|M|S and the lab.* parameters below), prints results as
# "LAB key=value ..." lines on the serial console and powers off.
/bin/busybox --install -s
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
mount -t tracefs tracefs /sys/kernel/tracing
mount -t debugfs debugfs /sys/kernel/debug
ip link set lo up
# Room for 32k+ threads: pid_max and threads-max default to 32768 and a
# share of memory; each thread stack is one mapping.
echo 4194304 > /proc/sys/kernel/pid_max
echo 1000000 > /proc/sys/kernel/threads-max
echo 1000000 > /proc/sys/vm/max_map_count

param() {  # param NAME DEFAULT: lab.NAME=VALUE from /proc/cmdline
  v=$(tr ' ' '\n' < /proc/cmdline | sed -n "s/^lab\.$1=//p" | tail -n 1)
  echo "${v:-$2}"
}
lab() { echo "LAB $*"; }
finish() { watch_stop; lab "done rc=$1"; sync; poweroff -f; }

SCENARIO=$(param scenario smoke)
FILTER=$(param filter "")
lab "boot scenario=$SCENARIO kernel=$(uname -r) cpus=$(nproc)" \
  "preempt=$(cat /sys/kernel/debug/sched/preempt 2>/dev/null | tr ' ' ,)" \
  "watchdog_thresh=$(cat /proc/sys/kernel/watchdog_thresh)"

# watch_start S: every S seconds, a "LAB mem" line (free memory, the
# kernel's own, running/all tasks) and one "LAB ps" line for each user
# process (not the watcher's own): pid, name, state, threads, CPU seconds
# (user + system), what it waits in (wchan) and the top of its kernel
# stack. What a guest that stops printing was doing; watch_stop ends it.
watch_start() {
  (
    every=$1
    read -r self _ < /proc/self/stat  # this subshell (read is a builtin)
    while sleep "$every"; do
      t=$(cut -d' ' -f1 /proc/uptime)
      lab "mem t=$t" $(awk '/^(MemFree|MemAvailable|Slab|SUnreclaim|KernelStack|PageTables):/ { printf "%s=%dM ", $1, $2 / 1024 }' /proc/meminfo | tr -d :) \
        "tasks=$(cut -d' ' -f4 /proc/loadavg)"
      for d in /proc/[0-9]*; do
        read -r comm < "$d/comm" 2>/dev/null || continue
        set -- $(sed 's/^.*) //' "$d/stat" 2>/dev/null)
        [ $# -ge 13 ] || continue
        # Kernel threads (PF_KTHREAD), this watcher and what it runs.
        [ $(( $7 & 0x200000 )) = 0 ] || continue
        [ "${d#/proc/}" = "$self" ] || [ "$2" = "$self" ] && continue
        lab "ps t=$t pid=${d#/proc/} comm=$comm state=$1" \
          "threads=$(sed -n 's/^Threads:[[:space:]]*//p' "$d/status" 2>/dev/null)" \
          "cpu_s=$(( (${12} + ${13}) / 100 ))" \
          "wchan=$(cat "$d/wchan" 2>/dev/null)" \
          "stack=$(head -n 3 "$d/stack" 2>/dev/null | sed 's/^\[<[0-9a-f]*>\] //; s/+.*//' | tr '\n' ',')"
      done
    done
  ) &
  WATCH_PID=$!
}
watch_stop() { [ -n "${WATCH_PID:-}" ] && kill "$WATCH_PID" 2>/dev/null; }

# hold N [PER_PROCESS]: starts N idle threads in the background (in one
# process, or PER_PROCESS tasks a process), waits until they run; HOLD_PID
# is the holding process.
hold() {
  rm -f /tmp/ready
  lab_threads hold "$1" /tmp/ready ${2:+"$2"} &
  HOLD_PID=$!
  while [ ! -f /tmp/ready ]; do
    if ! kill -0 "$HOLD_PID" 2>/dev/null; then lab "error hold $1 failed"; finish 1; fi
    sleep 0.2
  done
}
# The threads have exited and their tasks are freed (RCU) before what
# follows is timed.
release() { kill "$HOLD_PID"; wait "$HOLD_PID" 2>/dev/null; sleep 1; }

case "$SCENARIO" in
  smoke)
    n=$(param n 4096)
    t0=$(date +%s)
    hold "$n"
    lab "threads n=$n start_s=$(( $(date +%s) - t0 )) total=$(awk '{split($4,a,"/"); print a[2]}' /proc/loadavg)"
    lab "$(lab_threads enable "$FILTER") n=$n"
    release
    finish 0
    ;;
  *)
    . /bin/lab_scenarios.sh
    ;;
esac
