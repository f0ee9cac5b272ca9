# The kernel matrix's table for one kernel (run_matrix.sh), from the guest's
# console log of scenario M. Variables: kernel, flavour, ns (the thread
# counts, comma-separated), cfg (the kernel's config, for the static
# preemption model when /sys/kernel/debug/sched/preempt is absent).
# Prints one markdown row per probe kind, then "matrix: ..." lines (what
# the agent read, each disagreement, each unclear cell); exits 1 on a
# disagreement, a config the agent did not find, or a preemption mode other
# than the one the kernel runs (rt when built with PREEMPT_RT, else the
# bracketed mode of sched/preempt, else the config's choice). The rule is in
# run_matrix.sh's header.
function field(s, name,   m) {
  if (match(s, "(^| )" name "=[^ ]*")) {
    m = substr(s, RSTART, RLENGTH)
    sub(/^ /, "", m)
    return substr(m, length(name) + 2)
  }
  return ""
}
BEGIN {
  split("function_graph FUNCTION_GRAPH_TRACER kprobe_multi KPROBE_MULTI " \
        "kprobe_multi_return KPROBE_MULTI_RETURN kprobe_session KPROBE_SESSION " \
        "fprobe FPROBE_EVENT fprobe_return FPROBE_RETURN_EVENT kretprobe KRETPROBE", m, " ")
  for (i = 1; i in m; i += 2) agent_kind[m[i]] = m[i + 1]
  nn = split(ns, nv, ",")
  nlo = nv[1] + 0; nhi = nlo
  for (i = 2; i <= nn; i++) { if (nv[i] + 0 < nlo) nlo = nv[i] + 0; if (nv[i] + 0 > nhi) nhi = nv[i] + 0 }
  static = "?"
  while ((getline line < cfg) > 0) {
    if (line == "CONFIG_PREEMPT_RT=y") rt = 1
    else if (line == "CONFIG_PREEMPT_NONE=y") static = "none"
    else if (line == "CONFIG_PREEMPT_VOLUNTARY=y") static = "voluntary"
    else if (line == "CONFIG_PREEMPT=y") static = "full"
    else if (line == "CONFIG_PREEMPT_LAZY=y") static = "lazy"
  }
  if (rt) static = "rt"
  bad = 0
}
/^LAB preempt_file / {
  s = $0; sub(/^LAB preempt_file /, "", s)
  if (s == "absent") { preempt = static " (static: no sched/preempt)" }
  else {
    offered = ""; def = "?"
    n = split(s, w, " ")
    for (i = 1; i <= n; i++) {
      x = w[i]
      if (x ~ /^\(.*\)$/) { x = substr(x, 2, length(x) - 2); def = x }
      offered = offered (offered == "" ? "" : ", ") x
    }
    preempt = def " (" offered ")"
  }
  # The mode the kernel runs: PREEMPT_RT is a build choice that
  # sched/preempt (full or lazy beside it) does not show.
  runs = rt ? "rt" : (s == "absent" ? static : def)
  if (rt) preempt = "rt; sched/preempt " preempt
}
/^LAB page / { kernel_page = field($0, "kernel_bytes") }
/^LAB agent / {
  config_source = field($0, "config_source"); agent_preempt = field($0, "preempt_mode")
  unknown = field($0, "unknown"); agent_page = field($0, "page_size")
}
/^LAB predict / {
  k = field($0, "kind")
  pred[k] = field($0, "unavailable") == 1 ? "unavailable" : (field($0, "uses_fgraph") == 1 ? "walks" : "no walk")
  stack_size[k] = field($0, "shadow_stack_size")
}
/^LAB predict_second / {
  # While function_graph is the top-level tracer: a kind that registers an
  # fgraph user is refused before 6.11 (busy), one more pass after.
  k = field($0, "kind")
  pred2[k] = field($0, "unavailable") == 1 ? "unavailable" : (field($0, "busy") == 1 ? "refused" : (field($0, "uses_fgraph") == 1 ? "one pass" : "no walk"))
}
/^LAB attach n=[0-9]* kind=second:/ {
  k = substr(field($0, "kind"), 8)
  order2[++nk2] = k
  e2[k] = field($0, "errno") + 0
  s2[k] = e2[k] != 0 ? "errno " e2[k] " (" field($0, "step") ")" : sprintf("%s: %.1f / %.1f", field($0, "n"), field($0, "first_ms"), field($0, "second_ms"))
  f2[k] = field($0, "first_ms") + 0
  next
}
/^LAB attach / {
  k = field($0, "kind"); n = field($0, "n") + 0
  if (!(k in seen)) { seen[k] = 1; order[++nk] = k }
  e = field($0, "errno") + 0
  if (e != 0) { err[k] = e " (" field($0, "step") ")"; cell[k] = cell[k] (cell[k] == "" ? "" : "; ") n ": errno " e }
  else {
    first[k, n] = field($0, "first_ms") + 0; second[k, n] = field($0, "second_ms") + 0
    if (field($0, "mem_kb") != "") mem[k, n] = field($0, "mem_kb") + 0
    cell[k] = cell[k] (cell[k] == "" ? "" : "; ") sprintf("%d: %.1f / %.1f", n, first[k, n], second[k, n])
  }
}
END {
  if (config_source == "" || config_source == "-") {
    print "matrix: " kernel ": DISAGREE: the agent found no kernel config (the package's is " cfg ")"; bad++
  }
  if (tolower(agent_preempt) != "preempt_mode_" runs) {
    print "matrix: " kernel ": DISAGREE: the agent says " agent_preempt ", the kernel runs " runs; bad++
  }
  if (kernel_page == "" || agent_page != kernel_page) {
    print "matrix: " kernel ": DISAGREE: the agent says a page is " agent_page " bytes, the kernel's are " kernel_page; bad++
  }
  print "matrix: " kernel ": agent config_source " config_source ", preempt_mode " agent_preempt \
    ", kernel runs " preempt ", page " agent_page " bytes (kernel " kernel_page "), inputs unknown: " unknown
  for (i = 1; i <= nk; i++) {
    k = order[i]; a = agent_kind[k]
    p = (a in pred) ? pred[a] : "?"
    verdict = "agrees"
    if (k in err) {
      obs = "refused: errno " err[k]
      if (p != "unavailable") { verdict = "DISAGREE"; why = "the agent says it attaches, the kernel refused it: errno " err[k] }
    } else if (!((k, nlo) in first) || !((k, nhi) in first)) {
      obs = "no result at N=" nlo " and " nhi; verdict = "incomplete"; bad++
    } else {
      r = second[k, nhi] > 0 ? first[k, nhi] / second[k, nhi] : 1e9
      g = first[k, nlo] > 0 ? first[k, nhi] / first[k, nlo] : 1e9
      if ((k, nhi) in mem) {
        # The walk is the handing of a shadow stack to every thread that has
        # none: with the memory measured, it decides (every model row is at
        # least 2 KiB a thread; an attach that walks none leaves a few KiB
        # in all). The times are printed beside it.
        obs = mem[k, nhi] * 1024 / nhi >= 1024 ? "walks" : "no walk"
      } else if (r < 3) obs = "no walk"
      else if (g >= 2) obs = "walks"
      else obs = "unclear"
      walks_obs[k] = obs ~ /^walks/
      obs = obs sprintf(" (%.1fx, %.1fx)", r, g)
      if (p == "unavailable") { verdict = "DISAGREE"; why = "the agent says unavailable, the kernel attached it" }
      else if (obs ~ /^unclear/) { verdict = "unclear"; unclear = unclear " " k }
      else if (substr(obs, 1, length(p)) != p || (p == "walks") != (obs ~ /^walks/)) {
        verdict = "DISAGREE"; why = "predicted " p ", observed " obs
      }
    }
    # Shadow-stack bytes a thread: the model's, and what the first attach at
    # the larger N left allocated, over its threads (a MemFree delta: the
    # rest an attach allocates is under 1 % of N stacks there). Checked
    # where both sides walk: within 25 %.
    stack = "-"
    if ((k, nhi) in mem) {
      per = mem[k, nhi] * 1024 / nhi
      want = (a in stack_size) ? stack_size[a] + 0 : 0
      stack = sprintf("%s / %.0f", (a in stack_size) ? stack_size[a] : "?", per)
      if (p == "walks" && obs ~ /^walks/ && verdict == "agrees" && (want <= 0 || per < 0.75 * want || per > 1.25 * want)) {
        verdict = "DISAGREE"; why = sprintf("shadow stack %s bytes a thread predicted, %.0f measured", want, per)
      }
    }
    printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", kernel, flavour, preempt, k, p, obs, cell[k], stack, verdict
    if (verdict == "DISAGREE") { print "matrix: " kernel " " k ": DISAGREE: " why; bad++ }
  }
  # Second users (lab_attach second:KIND at NHI, function_graph on): refused
  # where the agent says busy; attached where it says one pass or no walk,
  # and then, where the kind walks as the first user, closer to that user's
  # second attach than to its walk: at most the geometric mean of the two
  # (one pass over the threads, no shadow stacks to hand; on the emulator's
  # arm64 guests an attach costs a third of a walk before any pass).
  for (i = 1; i <= nk2; i++) {
    k = order2[i]; a = agent_kind[k]
    p = (a in pred2) ? pred2[a] : "?"
    verdict = "agrees"
    if (e2[k] != 0) {
      obs = "refused: " s2[k]
      if (p != "refused" && p != "unavailable") { verdict = "DISAGREE"; why = "the agent says " p ", the kernel refused it: " s2[k] }
    } else {
      walked = (k in walks_obs) && walks_obs[k] && f2[k] > 0
      obs = "attached"
      if (walked) obs = obs sprintf(" (%.1fx under the first user's)", first[k, nhi] / f2[k])
      if (p == "refused" || p == "unavailable") { verdict = "DISAGREE"; why = "the agent says " p ", the kernel attached it" }
      else if (p == "one pass" && walked && f2[k] > sqrt(first[k, nhi] * second[k, nhi])) {
        verdict = "DISAGREE"; why = sprintf("predicted one pass, the attach took %.1f ms, nearer the first user's walk (%.1f ms) than its second attach (%.1f ms)", f2[k], first[k, nhi], second[k, nhi])
      }
    }
    printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", kernel, flavour, preempt, k " (second user)", p, obs, s2[k], "-", verdict
    if (verdict == "DISAGREE") { print "matrix: " kernel " " k " (second user): DISAGREE: " why; bad++ }
  }
  if (unclear != "") print "matrix: " kernel ": unclear (first >= 3x second, but not growing 2x with N):" unclear
  if (nk == 0) { print "matrix: " kernel ": no attach results"; bad++ }
  exit bad > 0
}
