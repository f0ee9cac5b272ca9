# The study's table and fits (run_study.sh): reads the guest's "LAB study"
# lines and prints, per layout, each N's first and second enable, the walk
# (first - second: the fixed cost and one pass taken out), its cost per
# visit, and two models of the walk fitted to it:
#   constant: T = c * (V - N)                      (the agent's model today)
#   cliff:    T = [c_h * min(N, M)^2 + c_m * (N^2 - M^2)+] / (2B) + p * N / B
# (a visit costs c_h while the pass walks no more than M tasks, which then
# stay cached, and c_m beyond; p a pass), fitted by least squares on the
# relative error, M by search. Then the extrapolation check: both models
# calibrated at the two smallest N only (the cliff's M from the fit over
# every N), their predictions at the larger N, as measured / predicted.
# With the user-space walk's lines ("LAB chase n=N ... ns_per_node=X",
# TRACEHEALTH_STUDY_CHASE), a third model, the agent's since the memory
# walk: the constant c, each pass priced at its size's level (levels from
# the walk's points as VisitLevelsOf makes them: from the geometric mean of
# two sizes, the larger's ns over the smallest's), calibrated at the two
# smallest N too.
# Variables: B (FTRACE_RETSTACK_ALLOC_SIZE, 32).
function field(sec, name,   m) {
  if (match(sec, "(^| )" name "=[0-9.e+-]+")) {
    m = substr(sec, RSTART, RLENGTH); sub(/^ /, "", m)
    return substr(m, length(name) + 2)
  }
  return ""
}
# solve(n): the n x n system A x = y in globals A, y; x in X. 0 if singular.
function solve(n,   i, j, k, p, t, f) {
  for (i = 1; i <= n; i++) {
    p = i
    for (j = i + 1; j <= n; j++) if (abs(A[j, i]) > abs(A[p, i])) p = j
    if (abs(A[p, i]) < 1e-300) return 0
    for (k = 1; k <= n; k++) { t = A[i, k]; A[i, k] = A[p, k]; A[p, k] = t }
    t = y[i]; y[i] = y[p]; y[p] = t
    for (j = i + 1; j <= n; j++) {
      f = A[j, i] / A[i, i]
      for (k = i; k <= n; k++) A[j, k] -= f * A[i, k]
      y[j] -= f * y[i]
    }
  }
  for (i = n; i >= 1; i--) {
    t = y[i]
    for (k = i + 1; k <= n; k++) t -= A[i, k] * X[k]
    X[i] = t / A[i, i]
  }
  return 1
}
function abs(v) { return v < 0 ? -v : v }
# The cliff's basis at N for knee m: h, beyond, pass.
function basis(nn, m) {
  b_h = (nn < m ? nn : m) ^ 2 / (2 * B)
  b_m = nn > m ? (nn * nn - m * m) / (2 * B) : 0
  b_p = nn / B
}
# fit_cliff(L, m, lo, hi): c_h, c_m, p by relative least squares over the
# points of layout L with index lo..hi (c_m left out when no point passes
# m, p when `with_p` is 0); sets FH, FM, FP and returns the rms relative
# error (-1 when it cannot be fitted).
function fit_cliff(L, m, lo, hi, with_p,   i, k, j, nn, w, r, cols, s, pred, any) {
  any = 0
  for (i = lo; i <= hi; i++) if (nn_[L, i] > m) any = 1
  cols = 1 + any + (with_p ? 1 : 0)
  for (j = 1; j <= 3; j++) { y[j] = 0; for (k = 1; k <= 3; k++) A[j, k] = 0 }
  for (i = lo; i <= hi; i++) {
    nn = nn_[L, i]; basis(nn, m); w = 1 / walk[L, i]
    v[1] = b_h * w; k = 1
    if (any) v[++k] = b_m * w
    if (with_p) v[++k] = b_p * w
    for (j = 1; j <= cols; j++) { y[j] += v[j]; for (k = 1; k <= cols; k++) A[j, k] += v[j] * v[k] }
  }
  if (!solve(cols)) return -1
  FH = X[1]; k = 1; FM = any ? X[++k] : FH; FP = with_p ? X[++k] : 0
  if (FH <= 0 || FM <= 0 || FP < 0) return -1
  s = 0
  for (i = lo; i <= hi; i++) {
    basis(nn_[L, i], m); pred = FH * b_h + FM * b_m + FP * b_p
    r = pred / walk[L, i] - 1; s += r * r
  }
  return sqrt(s / (hi - lo + 1))
}
# The walk's weighted visits beyond one pass for nn tasks, all without a
# stack (passes of 1 + i*B tasks, then nn), with layout L's levels.
function weighted(L, nn,   i, w, k, tot) {
  k = int((nn + B - 1) / B) - 1
  tot = 0
  for (i = 1; i <= k; i++) { w = 1 + i * B; tot += factor(L, w) * w }
  return tot
}
function factor(L, w,   j, f) {
  f = 1
  for (j = 2; j <= count[L]; j++) if (lv_from[L, j] <= w) f = lv_f[L, j]
  return f
}
/^LAB chase / { pend_n = field($0, "n") + 0; pend_ns = field($0, "ns_per_node") + 0; next }
/^LAB study / {
  L = match($0, /layout=[a-z]+/) ? substr($0, RSTART + 7, RLENGTH - 7) : "?"
  split($0, parts, / (uncal|measured): /)
  if (!(L in count)) layouts[++nl] = L
  n = field($0, "n") + 0
  f = field(parts[3], "first_ms") / 1000
  # Repetitions of one N: the shortest first enable is kept (interference
  # only adds time).
  if ((L, n) in at) {
    i = at[L, n]
    if (f >= first[L, i]) next
  } else {
    i = at[L, n] = ++count[L]
  }
  nn_[L, i] = field(parts[2], "threads_total") + 0
  n_[L, i] = n
  visits[L, i] = field(parts[2], "visits") + 0
  first[L, i] = field(parts[3], "first_ms") / 1000
  second[L, i] = field(parts[3], "second_ms") / 1000
  walk[L, i] = first[L, i] - second[L, i]
  per[L] = field($0, "per")
  if (pend_n == n) chase[L, i] = pend_ns
}
END {
  if (B == "") B = 32
  for (q = 1; q <= nl; q++) {
    L = layouts[q]; k = count[L]
    # The best knee, searched on a log grid from half the smallest N (below
    # it c_h would rest on no measurement) up to twice the largest (past
    # it: no knee, the constant model plus a pass cost).
    best = -1
    for (e = log(nn_[L, 1] / 2) / log(2); e <= log(2 * nn_[L, k]) / log(2); e += 0.01) {
      m = 2 ^ e
      r = fit_cliff(L, m, 1, k, 1)
      if (r >= 0 && (best < 0 || r < best)) { best = r; knee = m; ch = FH; cm = FM; cp = FP }
    }
    printf "\nlayout %s%s\n\n", L, L == "many" ? " (" per[L] " tasks a process)" : " (all threads in one process)"
    print "| N (tasks) | visits | first enable (ms) | second (ms) | walk (ms) | per visit (ns) | cliff fit (ms) | fit / measured |"
    print "|---:|---:|---:|---:|---:|---:|---:|---:|"
    for (i = 1; i <= k; i++) {
      basis(nn_[L, i], knee); f = ch * b_h + cm * b_m + cp * b_p
      printf "| %d | %d | %.1f | %.1f | %.1f | %.0f | %.1f | %.2f |\n", nn_[L, i], visits[L, i],
        first[L, i] * 1000, second[L, i] * 1000, walk[L, i] * 1000,
        walk[L, i] * 1e9 / (visits[L, i] - nn_[L, i]), f * 1000, f / walk[L, i]
    }
    if (best < 0) { print "study: " L ": no cliff fit"; continue }
    printf "\nstudy: %s: cliff fit c_h %.1f ns, c_m %.1f ns, M %.0f tasks, p %.1f us a pass, rms %.1f %%\n",
      L, ch * 1e9, cm * 1e9, knee, cp * 1e6, best * 100
    if (k < 3) continue
    # Calibrated at the two smallest N only.
    c = 0; for (i = 1; i <= 2; i++) c += walk[L, i] / (visits[L, i] - nn_[L, i]); c /= 2
    r = fit_cliff(L, knee, 1, 2, 0)
    printf "study: %s: calibrated at N = %d and %d: constant c %.1f ns; cliff (M %.0f from the fit) c_h %.1f, c_m %.1f ns\n",
      L, nn_[L, 1], nn_[L, 2], c * 1e9, knee, FH * 1e9, FM * 1e9
    # The walk-priced model, where every N has its walk.
    priced = 1
    for (i = 1; i <= k; i++) if (!((L, i) in chase) || chase[L, i] <= 0) priced = 0
    if (priced) {
      for (j = 2; j <= k; j++) { lv_from[L, j] = sqrt(nn_[L, j - 1] * nn_[L, j]); lv_f[L, j] = chase[L, j] / chase[L, 1] }
      cw = 0; for (i = 1; i <= 2; i++) cw += walk[L, i] / weighted(L, nn_[L, i]); cw /= 2
      s = ""; for (i = 1; i <= k; i++) s = s sprintf("%s%d:%.1f", i > 1 ? ", " : "", nn_[L, i], chase[L, i])
      printf "study: %s: user-space walk (ns a node): %s; walk-priced c %.1f ns at the smallest\n", L, s, cw * 1e9
    }
    for (i = 3; i <= k; i++) {
      if (priced) {
        pw = cw * weighted(L, nn_[L, i])
        printf "study: %s: N %d (%.0fx the larger calibration N): measured / walk-priced %.2f%s\n",
          L, nn_[L, i], nn_[L, i] / nn_[L, 2], walk[L, i] / pw, abs(walk[L, i] / pw - 1) <= 0.2 ? " (within 20 %)" : " (outside 20 %)"
      }
      basis(nn_[L, i], knee)
      pc = c * (visits[L, i] - nn_[L, i]); pk = FH * b_h + FM * b_m
      mult = nn_[L, i] / nn_[L, 2]
      printf "study: %s: N %d (%.0fx the larger calibration N): measured / constant %.2f, measured / cliff %.2f%s\n",
        L, nn_[L, i], mult, walk[L, i] / pc, walk[L, i] / pk,
        (r < 0 ? " (cliff not fitted)" : (abs(walk[L, i] / pk - 1) <= 0.2 ? " (within 20 %)" : " (outside 20 %)"))
    }
  }
}
