# Scenarios A and B of the lab guest, sourced by /init (which defines
# param, lab, finish, hold, release, SCENARIO and FILTER).
#
# A: the agent's fgraph prediction for the first function_graph enable with
#    set_ftrace_filter limited to FILTER, before calibration (state dir
#    /tmp/uncal, never calibrated) and after a --calibrate at lab.cal
#    threads, against the enable lab_threads times, at each N of lab.ns,
#    with fresh threads each time: lab.reps rounds, each one calibration
#    (state dir /tmp/calR, --calibrate_repeats=1) and then one enable at
#    each N priced with it; the N of lab.ns_once in the first round only.
# B: (boot with preempt=none watchdog_thresh=1) the agent as a daemon
#    reporting to a server in the guest every second, lab.b_threads idle
#    threads, one function_graph enable; prints the events the server holds
#    and its observed-events metric.
# S: the study (run_study.sh): at each N of lab.ns, lab.reps times for each
#    layout (one: the N threads in one process; many: lab.per tasks a
#    process), N fresh idle tasks, the agent's uncalibrated prediction (its
#    visit count) and one timed enable.
# M: the kernel matrix (run_matrix.sh): the agent's report once (what it
#    reads and what it predicts per probe kind), then for each N of lab.ns
#    and each kind of lab.kinds, lab.reps times (the shortest kept), N
#    fresh idle threads and one lab_attach (first attach, detach, second
#    attach, detach) on FILTER. Then, at the largest N, each kind of
#    lab.second_kinds as a second fgraph user (lab_attach second:KIND:
#    function_graph stays the top-level tracer while KIND attaches), with
#    the agent's report read while function_graph is on.

AGENT=tracehealth-agent

# predict STATE_DIR: one report; prints scenario A's probe kind's entry's
# fields (PROBE_KIND, default the function_graph tracer) as "FIELD=VALUE".
PROBE_KIND=PROBE_KIND_FUNCTION_GRAPH_TRACER
predict() {
  $AGENT --once --format=json --host_id=lab --state_dir="$1" --kernel_log=false \
      > /tmp/report.json 2> /tmp/agent.err || {
    lab "error agent --once: $(tail -n 3 /tmp/agent.err | tr '\n' ' ')"; finish 1; }
  tr -d ' \n' < /tmp/report.json \
    | grep -o "\"probe_kind\":\"$PROBE_KIND\"[^}]*" | head -n 1 \
    | tr ',' '\n' | tr -d '"' \
    | sed -n 's/^\(threads_total\|null_threads\|passes\|visits\|latency_seconds\|walk_seconds\|patch_seconds\):/\1=/p' \
    | tr '\n' ' '
}

# calibrate STATE_DIR K: one --calibrate with K threads of the agent's own;
# prints its output line (or the reason it could not).
calibrate() {
  $AGENT --calibrate --calibrate_threads="$2" --calibrate_budget=60s \
      --calibrate_repeats="${3:-1}" \
      --state_dir="$1" --host_id=lab > /tmp/calibrate.out 2>&1
  rc=$?
  lab "calibrate k=$2 rc=$rc $(grep -m1 -E 'calibrated:|refused|error|unknown' /tmp/calibrate.out | tr -s ' ')"
  return $rc
}

set_filter() {
  echo nop > /sys/kernel/tracing/current_tracer
  echo "$FILTER" > /sys/kernel/tracing/set_ftrace_filter || {
    lab "error set_ftrace_filter=$FILTER refused"; finish 1; }
}

# measure_a: scenario A's timed first attach at the threads held, as
# "first_ms=F second_ms=S": function_graph's enable (lab_threads), or
# lab_attach's BPF kprobe_multi return probe.
measure_a() {
  if [ "$A_KIND" = function_graph ]; then
    lab_threads enable "$FILTER"
  else
    r=$(lab_attach "$A_KIND" "$FILTER") || return 1
    case "$r" in *" errno=0"*) echo "$r" ;; *) lab "error $r"; return 1 ;; esac
  fi
}

scenario_a() {
  # The probe kind predicted and timed (the calibration is function_graph's
  # whatever the kind: one c_visit prices every fgraph user's walk).
  A_KIND=$(param a_kind function_graph)
  case "$A_KIND" in
    function_graph) PROBE_KIND=PROBE_KIND_FUNCTION_GRAPH_TRACER ;;
    kprobe_multi_return) PROBE_KIND=PROBE_KIND_KPROBE_MULTI_RETURN ;;
    *) lab "error unknown lab.a_kind $A_KIND"; finish 1 ;;
  esac
  lab "note scenario A: $A_KIND ($PROBE_KIND)"
  # Stall and lockup reports with their registers and call trace on the
  # console (quiet keeps only their first line): where a guest that never
  # finishes was stuck.
  echo 5 > /proc/sys/kernel/printk
  watch_start 60
  cal=$(param cal 32768)
  ns=$(param ns 16384,65536)
  ns_once=$(param ns_once none)
  [ "$ns_once" = none ] && ns_once=""
  reps=$(param reps 3)
  # Seconds scenario A may take (0: no limit): a round starts only when the
  # longest round so far (without the first round's N of ns_once) fits in
  # what is left, so the scenario ends by itself before the host's timeout.
  budget=$(param budget_s 0)
  a_start=$(date +%s)
  longest=0
  set_filter
  mkdir -p /tmp/uncal
  hold "$cal"
  lab "row n=$cal role=calibration uncal: $(predict /tmp/uncal)"
  release
  # REPS rounds of one calibration and one timed enable at each N, so that
  # what slows the emulator for a while slows a calibration and the enables
  # it is compared with alike.
  for r in $(seq 1 "$reps"); do
    r_start=$(date +%s)
    used=$(( r_start - a_start ))
    if [ "$r" -gt 1 ] && [ "$budget" -gt 0 ] && [ $(( used + longest )) -gt "$budget" ]; then
      lab "note rounds $r-$reps skipped: ${used} s used, a round takes up to ${longest} s, budget ${budget} s"
      break
    fi
    once_s=0
    set_filter
    mkdir -p "/tmp/cal$r"
    calibrated=1
    calibrate "/tmp/cal$r" "$cal" || {
      calibrated=0; lab "note round $r: calibration unavailable"; }
    each=$ns
    [ "$r" = 1 ] && each="$ns${ns_once:+,$ns_once}"
    for n in $(echo "$each" | tr ',' ' '); do
      set_filter
      t0=$(date +%s)
      hold "$n"
      lab "threads n=$n round=$r start_s=$(( $(date +%s) - t0 ))"
      u="" c=""
      [ "$r" = 1 ] && u=$(predict /tmp/uncal)
      [ "$calibrated" = 1 ] && c=$(predict "/tmp/cal$r")
      lab "step enable n=$n round=$r"
      m=$(measure_a) || { lab "error $A_KIND at n=$n"; finish 1; }
      lab "row n=$n round=$r role=measured uncal: $u cal: $c measured: $m"
      release
      case ",$ns," in
        *",$n,"*) ;;
        *) once_s=$(( once_s + $(date +%s) - t0 )) ;;
      esac
    done
    d=$(( $(date +%s) - r_start - once_s ))
    [ "$d" -gt "$longest" ] && longest=$d
    lab "note round $r ${d} s (ns_once ${once_s} s more)"
  done
  finish 0
}

scenario_s() {
  mkdir -p /tmp/uncal
  per=$(param per 8)
  for n in $(param ns 8192,16384,32768,65536,131072 | tr ',' ' '); do
    for layout in $(seq 1 "$(param reps 1)" | sed "s/.*/$(param layouts one,many | tr ',' ' ')/"); do
      set_filter
      t0=$(date +%s)
      if [ "$layout" = one ]; then hold "$n"; else hold "$n" "$per"; fi
      lab "threads n=$n layout=$layout start_s=$(( $(date +%s) - t0 ))"
      u=$(predict /tmp/uncal)
      lab "predicted n=$n layout=$layout at_s=$(( $(date +%s) - t0 ))"
      [ "$(param chase 0)" = 0 ] || lab "$(lab_chase "$(param chase 0)" "$n")"
      m=$(lab_threads enable "$FILTER") || { lab "error enable at n=$n"; finish 1; }
      lab "study n=$n layout=$layout per=$per uncal: $u measured: $m"
      release
    done
  done
  finish 0
}

# C: the user-space walk alone (lab_chase) at each N of lab.ns, for each
#    stride of lab.strides.
scenario_c() {
  for stride in $(param strides 10240 | tr ',' ' '); do
    lab_chase "$stride" $(param ns 8192,16384,32768,65536,131072 | tr ',' ' ') \
      | while read -r line; do lab "$line"; done
  done
  finish 0
}

scenario_b() {
  n=$(param b_threads 49152)
  cal=$(param cal 4096)
  mkdir -p /tmp/srv /tmp/state
  tracehealth-server --data_dir=/tmp/srv --listen=127.0.0.1:7443 \
      --metrics_listen=127.0.0.1:9464 > /tmp/server.log 2>&1 &
  srv=$!
  sleep 1
  set_filter
  if [ "$(param b_calibrate 1)" = 1 ]; then
    calibrate /tmp/state "$cal" || lab "note calibration unavailable: seed constants"
  fi
  set_filter
  t0=$(date +%s)
  hold "$n"
  lab "threads n=$n start_s=$(( $(date +%s) - t0 ))"
  $AGENT --host_id=lab --state_dir=/tmp/state --server=127.0.0.1:7443 --interval=1s \
      > /tmp/agent.log 2>&1 &
  agent=$!
  lab "row n=$n role=lockup pred: $(predict /tmp/state)"
  sleep 3   # two reports with these threads reach the server first
  ( while :; do
      lab "poll $(date +%T) $(tracehealthctl hosts --server=127.0.0.1:7443 2>&1 | tail -n 1)"
      sleep 1
    done ) &
  poll=$!
  lab "enable at $(date +%T)"
  m=$(lab_threads enable "$FILTER") || { lab "error enable at n=$n"; finish 1; }
  lab "lockup n=$n measured: $m at $(date +%T)"
  sleep 4   # the agent reads the kernel log and reports it
  kill "$poll"
  # The first lockup's records, as the agent read them from /dev/kmsg.
  timeout 1 cat /dev/kmsg | sed -n '/soft lockup/,/; <\/TASK>/p' | head -n 60 \
    | sed 's/^/LAB kmsg /'
  tail -n 20 /tmp/agent.log | sed 's/^/LAB agentlog /'
  tracehealthctl events lab --server=127.0.0.1:7443 2>&1 | sed 's/^/LAB events /'
  wget -qO- http://127.0.0.1:9464/metrics | grep '^tracehealth_observed_events_total' \
    | sed 's/^/LAB metric /'
  kill "$agent" "$srv"
  release
  finish 0
}

# report_kinds [TAG]: one agent --once report; prints what the agent read of
# the kernel (config source, preemption, the inputs it could not get) and,
# per probe kind, whether it predicts an fgraph user (uses_fgraph: the attach
# walks every thread without a shadow stack) or the kind unavailable, as
# "LAB predict ..." lines, or "LAB TAG ..." without the "LAB agent" line.
report_kinds() {
  $AGENT --once --format=json --host_id=lab --state_dir=/tmp/m --kernel_log=false \
      > /tmp/report.json 2> /tmp/agent.err || {
    lab "error agent --once: $(tail -n 3 /tmp/agent.err | tr '\n' ' ')"; finish 1; }
  # One line; the spaces of the indentation and after each colon go, those
  # inside values stay.
  tr -d '\n' < /tmp/report.json | sed 's/": /":/g; s/  */ /g; s/\([[{,]\) /\1/g; s/ \([]}]\)/\1/g' | awk -v tag="${1:-predict}" '
    function num(s, key,   i, t) {
      i = index(s, "\"" key "\":"); if (!i) return "-"
      t = substr(s, i + length(key) + 3); sub(/^"/, "", t); match(t, /^[0-9]+/)
      return RLENGTH > 0 ? substr(t, 1, RLENGTH) : "-"
    }
    function str(s, key,   i, t) {
      i = index(s, "\"" key "\":\""); if (!i) return "-"
      t = substr(s, i + length(key) + 4); t = substr(t, 1, index(t, "\"") - 1)
      gsub(/ /, "_", t); return t
    }
    tag == "predict" {
      printf "LAB agent config_source=%s preempt_mode=%s preempt_source=%s page_size=%s unknown=",
        str($0, "config_source"), str($0, "preempt_mode"), str($0, "preempt_source"), num($0, "page_size")
      u = ""
      if (match($0, /"unknown":\[[^]]*\]/)) {
        rest = substr($0, RSTART, RLENGTH)
        while ((i = index(rest, "\"input\":\""))) {
          rest = substr(rest, i + 9); u = u (u == "" ? "" : ",") substr(rest, 1, index(rest, "\"") - 1)
        }
      }
      print (u == "" ? "none" : u)
    }
    {
      n = split($0, parts, "\"probe_kind\":\"PROBE_KIND_")
      for (i = 2; i <= n; i++) {
        p = parts[i]
        if ((j = index(p, "\"cpu_class\""))) p = substr(p, 1, j)
        printf "LAB %s kind=%s uses_fgraph=%d unavailable=%d busy=%d already_active=%d shadow_stack_size=%s\n",
          tag, substr(p, 1, index(p, "\"") - 1), (index(p, "\"uses_fgraph\":true") > 0),
          (index(p, "\"unavailable\":true") > 0), (index(p, "\"busy\":true") > 0),
          (index(p, "\"fgraph_already_active\":true") > 0), num(p, "shadow_stack_size")
      }
    }'
}

# attach_min KIND N REPS: REPS runs of lab_attach KIND, each with N fresh
# idle threads; sets ATTACH to the run with the shortest first attach, its
# second attach replaced by the shortest second attach of all runs, and
# every first attach (all_first_ms); no subshell, so that an error reaches
# the console. Interference from the host only adds time.
mem_free_kb() { awk '$1 == "MemFree:" { print $2 }' /proc/meminfo; }
# MemFree once it has settled: what exited threads leave to free (RCU,
# delayed task puts) is freed while the next cell runs, and would count
# against that cell's attach. Two readings half a second apart within
# 256 KiB, or the last of 40.
mem_settled_kb() {
  a=$(mem_free_kb)
  for i in $(seq 1 40); do
    sleep 0.5
    b=$(mem_free_kb)
    [ $(( a > b ? a - b : b - a )) -lt 256 ] && break
    a=$b
  done
  echo "$b"
}

attach_min() {
  best="" all="" min2=""
  for i in $(seq 1 "$3"); do
    t0=$(date +%s)
    hold "$2"
    m0=$(mem_settled_kb)
    r=$(lab_attach "$1" "$FILTER" 2>/tmp/attach.err) \
      || { lab "error lab_attach $1: $(tr '\n' ' ' < /tmp/attach.err)"; finish 1; }
    # What the attaches left allocated while the threads live (their shadow
    # stacks stay until they exit).
    r="$r mem_kb=$(( m0 - $(mem_settled_kb) ))"
    release
    f=$(echo "$r" | sed -n 's/.* first_ms=\([-0-9.]*\).*/\1/p')
    s=$(echo "$r" | sed -n 's/.* second_ms=\([-0-9.]*\).*/\1/p')
    all="$all${all:+,}$f"
    if [ -z "$best" ] || awk -v a="$f" -v b="$bf" 'BEGIN { exit !(a < b) }'; then
      best=$r bf=$f start=$(( $(date +%s) - t0 ))
    fi
    if [ -z "$min2" ] || awk -v a="$s" -v b="$min2" 'BEGIN { exit !(a < b) }'; then min2=$s; fi
  done
  ATTACH=$(echo "$best" | sed "s/ second_ms=[-0-9.]*/ second_ms=$min2/;s/\$/ all_first_ms=$all start_s=$start/")
}

scenario_m() {
  mkdir -p /tmp/m
  # No transparent huge pages (Debian's kernels default to always): the held
  # threads' stacks merge into one mapping that khugepaged would fill in
  # while a cell runs, which MemFree would count against the attach.
  echo never > /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null
  lab "preempt_file $(cat /sys/kernel/debug/sched/preempt 2>/dev/null || echo absent)"
  lab "page kernel_bytes=$(awk '$1 == "KernelPageSize:" { print $2 * 1024; exit }' /proc/self/smaps)"
  # One untimed function_graph attach first: the tracing ring buffer grows
  # to its full size on the first tracer of a boot, which would otherwise
  # land in the first cell's time and memory.
  lab_attach function_graph "$FILTER" > /dev/null 2>&1 || lab "note warm-up attach failed"
  report_kinds
  refused=""
  for n in $(param ns 4096,16384 | tr ',' ' '); do
    for kind in $(param kinds function_graph,kprobe_multi,kprobe_multi_return,kprobe_session,fprobe,fprobe_return,kretprobe | tr ',' ' '); do
      # A kind the kernel refused once is refused at every N: not tried again.
      case " $refused " in *" $kind "*) continue ;; esac
      attach_min "$kind" "$n" "$(param reps 1)"
      lab "attach n=$n $ATTACH"
      case "$ATTACH" in *" errno=0 "*) ;; *) refused="$refused $kind" ;; esac
    done
  done
  # Second fgraph users at the largest N, and what the agent predicts for
  # each kind while function_graph is the top-level tracer.
  second=$(param second_kinds function_graph,kprobe_multi_return | tr ',' ' ')
  if [ "$second" != none ]; then
    nhi=$(param ns 4096,16384 | tr ',' '\n' | sort -n | tail -n 1)
    echo "$FILTER" > /sys/kernel/tracing/set_ftrace_filter
    echo function_graph > /sys/kernel/tracing/current_tracer
    report_kinds predict_second
    echo nop > /sys/kernel/tracing/current_tracer
    echo > /sys/kernel/tracing/set_ftrace_filter
    for kind in $second; do
      attach_min "second:$kind" "$nhi" "$(param reps 1)"
      lab "attach n=$nhi $ATTACH"
    done
  fi
  finish 0
}

case "$SCENARIO" in
  A) scenario_a ;;
  B) scenario_b ;;
  M) scenario_m ;;
  C) scenario_c ;;
  S) scenario_s ;;
  *) lab "error unknown scenario $SCENARIO"; finish 1 ;;
esac
