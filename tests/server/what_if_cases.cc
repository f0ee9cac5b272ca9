// The hand-worked cases of what_if_hosts_test (what_if_cases.h).
#include "tests/server/what_if_cases.h"

#include <vector>

namespace tracehealth::testing {

// The hosts, by the kind of kernel they run.
//
// mainline: kasan-6.12-256cpu, 6.12.3, static PREEMPT_NONE build
//   (c_visit 58.7 ns), no PREEMPT_RCU, 61,000 threads, fgraph never active
//   (N_null = N_total), 2,000 traceable functions, watchdog_thresh 10 (soft
//   lockup at 20 s), RCU stall at 21 s.
// debian: preempt-none-6.16-240k, "6.16.12-cloud-amd64", /proc/version
//   "... Debian 6.16.12-1": rows asked about 6.16.12. PREEMPT_DYNAMIC booted
//   none (c_visit 88.7 ns), PREEMPT_RCU, 240,000 threads, fgraph never
//   active, 2,000 functions, 20 s / 21 s.
// ubuntu: kprobe-multi-6.14, "6.14.0-1012-aws", /proc/version_signature
//   "Ubuntu 6.14.0-1012.12~24.04.1-aws 6.14.8": rows asked about 6.14.8.
//   PREEMPT_DYNAMIC booted voluntary (88.7 ns), PREEMPT_RCU, 12,000 threads,
//   fgraph active (a tetragon kprobe_multi link; null bound 0).

namespace {

// A first user's walk, T = c_visit V + c_pass P + c_alloc N_null (c_pass
// 2 us, c_alloc 20 ns), with V and P worked out per case.
double Walk(double c_visit, double visits, double passes, double n_null) {
  return c_visit * visits + 2e-6 * passes + 20e-9 * n_null;
}
// A second user: one pass over every thread, c_visit N + c_pass.
double Pass(double c_visit, double n) { return c_visit * n + 2e-6; }

}  // namespace

// Patching: a fprobe kind's typical 100 sites at 1.069 s / 48,712 each; the
// function_graph tracer's 2,000 functions at 1 us.
const double kFprobePatch = 100 * (1.069 / 48712);  // 2.1945 ms
const double kGraphPatch = 2000 * 1e-6;             // 2 ms
constexpr double kNone = 58.7e-9;                   // static NONE/VOLUNTARY
constexpr double kPreemption = 88.7e-9;             // CONFIG_PREEMPTION

// All-NULL walks, B = 32 unless said: P = ceil(N / B), k = P - 1,
// V = B k (k + 1) / 2 + k + N.
//   N = 240,000: P = 7,500, V = 16 * 7,499 * 7,500 + 7,499 + 240,000
//                = 900,127,499
//   N = 240,000, B = 1,024: P = 235, V = 512 * 234 * 235 + 234 + 240,000
//                = 28,395,114
//   N = 100,000: P = 3,125, V = 16 * 3,124 * 3,125 + 3,124 + 100,000
//                = 156,303,124
//   N = 61,000:  P = 1,907, V = 16 * 1,906 * 1,907 + 1,906 + 61,000
//                = 58,218,778
//   N = 61,000, B = 1,024: P = 60, V = 512 * 59 * 60 + 59 + 61,000
//                = 1,873,539
//   N = 120,000: P = 3,750, V = 16 * 3,749 * 3,750 + 3,749 + 120,000
//                = 225,063,749
//   N = 12,000:  P = 375, V = 16 * 374 * 375 + 374 + 12,000 = 2,256,374
// NULL threads at the tail of N_total: F = ceil(N_null / B), k = F - 1,
// V = k (N_total - N_null + 1) + B k (k + 1) / 2 + N_total.
//   240,000 with 3,200 NULL: F = 100, V = 99 * 236,801 + 158,400 + 240,000
//                = 23,841,699
//   61,000 with 1,000 NULL:  F = 32, V = 31 * 60,001 + 15,872 + 61,000
//                = 1,936,903
const double kDebianWalk = Walk(kPreemption, 900127499, 7500, 240000);
const double kMainlineWalk = Walk(kNone, 58218778, 1907, 61000);

constexpr v1::ProbeKind kGraph = v1::PROBE_KIND_FUNCTION_GRAPH_TRACER;
constexpr v1::ProbeKind kMultiReturn = v1::PROBE_KIND_KPROBE_MULTI_RETURN;

// The notes that say why a fprobe kind uses fgraph or not.
const char kEntryOnlyOff[] = "entry-only fprobes no longer register fgraph";
const char kExitHandler[] = "fprobes with an exit handler register fgraph";
const char kRethook[] = "fprobe is not built on fgraph before 6.14 (rethook)";

const char kOverriddenNote[] =
    "kernel release overridden (what-if): feature rows asked about ";

std::vector<Case> Cases() {
  using v1::RISK_LATENCY;
  using v1::RISK_NONE;
  using v1::RISK_STALL;
  using v1::RISK_WARNING;
  // Risk: a walk that runs without a reschedule point (PREEMPT_NONE) is
  // judged against 20 s: >= 1 a stall, >= 0.5 a warning; otherwise a caller
  // blocked >= 0.1 s is latency, less is none.
  return {
      // ---- debian ------------------------------------------------------
      // As stored: 6.16.12 has fprobe on fgraph (6.14) and entry-only
      // fprobes still on it (off from 6.19, 6.18.32): 79.86 s, whole walk
      // without a reschedule point, 3.99 x 20 s.
      {"debian",
       kMultiReturn,
       "",
       {true, false, 7500, RISK_STALL, kDebianWalk + kFprobePatch}},
      {"debian",
       kMulti,
       "",
       {true, false, 7500, RISK_STALL, kDebianWalk + kFprobePatch}},
      // 6.19.0: entry-only fprobes are off fgraph: patching only.
      {"debian",
       kMulti,
       "kernel_release: '6.19.0'",
       {false, false, 0, RISK_NONE, kFprobePatch, kEntryOnlyOff}},
      // An exit handler still registers fgraph: the same walk.
      {"debian",
       kMultiReturn,
       "kernel_release: '6.19.0'",
       {true, false, 7500, RISK_STALL, kDebianWalk + kFprobePatch,
        kExitHandler}},
      // The 6.18.y backport: from 6.18.32 on x86-64, not 6.18.31.
      {"debian",
       kMulti,
       "kernel_release: '6.18.32'",
       {false, false, 0, RISK_NONE, kFprobePatch, kEntryOnlyOff}},
      {"debian",
       kMulti,
       "kernel_release: '6.18.31'",
       {true, false, 7500, RISK_STALL, kDebianWalk + kFprobePatch}},
      // 6.13.0: fprobe is not on fgraph before 6.14 (rethook).
      {"debian",
       kMultiReturn,
       "kernel_release: '6.13.0'",
       {false, false, 0, RISK_NONE, kFprobePatch, kRethook}},
      {"debian",
       kMulti,
       "kernel_release: '6.13.0'",
       {false, false, 0, RISK_NONE, kFprobePatch}},
      {"debian",
       kMultiReturn,
       "kernel_release: '6.14.0'",
       {true, false, 7500, RISK_STALL, kDebianWalk + kFprobePatch}},
      {"debian",
       kMultiReturn,
       "kernel_release: '6.1.0'",
       {false, false, 0, RISK_NONE, kFprobePatch}},
      // 6.1.0's shadow stacks are 2,048 B (through 6.10): 240,000 of them.
      {"debian",
       kGraph,
       "kernel_release: '6.1.0'",
       {true, false, 7500, RISK_STALL, kDebianWalk + kGraphPatch, "",
        240000ull * 2048}},
      // A Debian ABI string names no upstream version: judged as Debian's
      // kernel without one, rows by 6.12.0 (no fprobe on fgraph), with a
      // note and the confidence lowered.
      {"debian",
       kMultiReturn,
       "kernel_release: '6.12.0-1-amd64'",
       {false, false, 0, RISK_NONE, kFprobePatch,
        "Debian kernel: its backports make the mainline version meaningless; "
        "rows decided by 6.12.0 as if mainline, confidence lowered"}},
      // 100,000 threads: 13.87 s, 0.69 x 20 s.
      {"debian",
       kMultiReturn,
       "threads: 100000",
       {true, false, 3125, RISK_WARNING,
        Walk(kPreemption, 156303124, 3125, 100000) + kFprobePatch}},
      // 3,200 NULL threads at the tail: 2.12 s.
      {"debian",
       kMultiReturn,
       "null_threads: 3200",
       {true, false, 100, RISK_LATENCY,
        Walk(kPreemption, 23841699, 100, 3200) + kFprobePatch}},
      // B = 1,024: 2.53 s.
      {"debian",
       kMultiReturn,
       "batch: 1024",
       {true, false, 235, RISK_LATENCY,
        Walk(kPreemption, 28395114, 235, 240000) + kFprobePatch}},
      // Full preemption with PREEMPT_RCU: the walk is preemptible; the
      // caller still blocks 79.86 s.
      {"debian",
       kMultiReturn,
       "preempt_mode: PREEMPT_MODE_FULL",
       {true, false, 7500, RISK_LATENCY, kDebianWalk + kFprobePatch}},
      // Voluntary: one pass (21.3 ms) between reschedule points.
      {"debian",
       kMultiReturn,
       "preempt_mode: PREEMPT_MODE_VOLUNTARY",
       {true, false, 7500, RISK_LATENCY, kDebianWalk + kFprobePatch}},
      // c_visit 20 ns: 18.02 s, 0.90 x 20 s.
      {"debian",
       kMultiReturn,
       "c_visit_seconds: 20e-9",
       {true, false, 7500, RISK_WARNING,
        Walk(20e-9, 900127499, 7500, 240000) + kFprobePatch}},
      // A budget adds a check; the stall is still a stall.
      {"debian",
       kMultiReturn,
       "latency_budget_seconds: 100",
       {true, false, 7500, RISK_STALL, kDebianWalk + kFprobePatch}},
      // fgraph active: a second user (6.11+) walks every thread once.
      {"debian",
       kMultiReturn,
       "fgraph_active: true",
       {true, false, 1, RISK_NONE, Pass(kPreemption, 240000) + kFprobePatch}},
      {"debian",
       kMultiReturn,
       "fgraph_active: false",
       {true, false, 7500, RISK_STALL, kDebianWalk + kFprobePatch}},
      // 6.1.0 allows one fgraph user: a second one is refused (busy).
      {"debian",
       kGraph,
       "kernel_release: '6.1.0' fgraph_active: true",
       {true, true, 0, RISK_NONE, 0}},

      // ---- ubuntu ------------------------------------------------------
      // As stored: fgraph active on 6.14.8, several users: one pass.
      {"ubuntu",
       kMultiReturn,
       "",
       {true, false, 1, RISK_NONE, Pass(kPreemption, 12000) + kFprobePatch}},
      {"ubuntu",
       kMultiReturn,
       "kernel_release: '6.13.0'",
       {false, false, 0, RISK_NONE, kFprobePatch, kRethook}},
      {"ubuntu",
       kMulti,
       "kernel_release: '6.19.0'",
       {false, false, 0, RISK_NONE, kFprobePatch, kEntryOnlyOff}},
      {"ubuntu",
       kMultiReturn,
       "kernel_release: '6.19.0'",
       {true, false, 1, RISK_NONE, Pass(kPreemption, 12000) + kFprobePatch}},
      // 6.1.0: fgraph active and one user allowed: function_graph is busy.
      {"ubuntu",
       kGraph,
       "kernel_release: '6.1.0'",
       {true, true, 0, RISK_NONE, 0, ""}},
      // Ubuntu's ABI string cannot be told from a local build's suffix
      // without the version string: judged by its numbers, 6.8.0.
      {"ubuntu",
       kMultiReturn,
       "kernel_release: '6.8.0-45-generic'",
       {false, false, 0, RISK_NONE, kFprobePatch, kRethook}},
      // A pass of 400,000 tasks is longer than the host's 32 MiB L3 holds
      // (262,144 tasks at 128 B): each visit pays a miss, 75 ns more.
      {"ubuntu",
       kMultiReturn,
       "threads: 400000",
       {true, false, 1, RISK_NONE,
        Pass(kPreemption + 75e-9, 400000) + kFprobePatch}},
      // fgraph active: the NULL bound does not matter, nor does B.
      {"ubuntu",
       kMultiReturn,
       "null_threads: 5",
       {true, false, 1, RISK_NONE, Pass(kPreemption, 12000) + kFprobePatch}},
      {"ubuntu",
       kMultiReturn,
       "batch: 1024",
       {true, false, 1, RISK_NONE, Pass(kPreemption, 12000) + kFprobePatch}},
      // A second user's pass runs with preemption off on every mode.
      {"ubuntu",
       kMultiReturn,
       "preempt_mode: PREEMPT_MODE_NONE",
       {true, false, 1, RISK_NONE, Pass(kPreemption, 12000) + kFprobePatch}},
      {"ubuntu",
       kMultiReturn,
       "c_visit_seconds: 1e-6",
       {true, false, 1, RISK_NONE, Pass(1e-6, 12000) + kFprobePatch}},
      // 3.26 ms over a 1 ms budget.
      {"ubuntu",
       kMultiReturn,
       "latency_budget_seconds: 0.001",
       {true, false, 1, RISK_LATENCY, Pass(kPreemption, 12000) + kFprobePatch}},
      // Inactive with the stored bound 0 (every thread has a stack): the
      // one pass start_graph_tracing() always makes.
      {"ubuntu",
       kMultiReturn,
       "fgraph_active: false",
       {true, false, 1, RISK_NONE,
        Walk(kPreemption, 12000, 1, 0) + kFprobePatch}},
      // With a thread count the bound is dropped: every thread NULL, 0.2 s.
      {"ubuntu",
       kMultiReturn,
       "fgraph_active: false threads: 12000",
       {true, false, 375, RISK_LATENCY,
        Walk(kPreemption, 2256374, 375, 12000) + kFprobePatch}},

      // ---- mainline ----------------------------------------------------
      // As stored: 6.12.3 has no fprobe on fgraph; function_graph walks
      // 3.42 s, 0.17 x 20 s; PAGE_SIZE shadow stacks (6.11-6.12).
      {"mainline",
       kMultiReturn,
       "",
       {false, false, 0, RISK_NONE, kFprobePatch}},
      {"mainline",
       kGraph,
       "",
       {true, false, 1907, RISK_LATENCY, kMainlineWalk + kGraphPatch, "",
        61000ull * 4096}},
      {"mainline",
       kMultiReturn,
       "kernel_release: '6.19.0'",
       {true, false, 1907, RISK_LATENCY, kMainlineWalk + kFprobePatch,
        kExitHandler}},
      {"mainline",
       kMulti,
       "kernel_release: '6.19.0'",
       {false, false, 0, RISK_NONE, kFprobePatch}},
      {"mainline",
       kMultiReturn,
       "kernel_release: '6.13.0'",
       {false, false, 0, RISK_NONE, kFprobePatch}},
      {"mainline",
       kGraph,
       "kernel_release: '6.1.0'",
       {true, false, 1907, RISK_LATENCY, kMainlineWalk + kGraphPatch, "",
        61000ull * 2048}},
      // 120,000 threads: 13.22 s, 0.66 x 20 s.
      {"mainline",
       kGraph,
       "threads: 120000",
       {true, false, 3750, RISK_WARNING,
        Walk(kNone, 225063749, 3750, 120000) + kGraphPatch}},
      {"mainline",
       kGraph,
       "null_threads: 1000",
       {true, false, 32, RISK_LATENCY,
        Walk(kNone, 1936903, 32, 1000) + kGraphPatch}},
      {"mainline",
       kGraph,
       "batch: 1024",
       {true, false, 60, RISK_LATENCY,
        Walk(kNone, 1873539, 60, 61000) + kGraphPatch}},
      // Full preemption on this static build: the mode says CONFIG_PREEMPTION
      // (88.7 ns); without PREEMPT_RCU each pass runs with preemption off,
      // 3.6 ms: latency only.
      {"mainline",
       kGraph,
       "preempt_mode: PREEMPT_MODE_FULL",
       {true, false, 1907, RISK_LATENCY,
        Walk(kPreemption, 58218778, 1907, 61000) + kGraphPatch}},
      // c_visit 200 ns: 11.65 s, 0.58 x 20 s.
      {"mainline",
       kGraph,
       "c_visit_seconds: 200e-9",
       {true, false, 1907, RISK_WARNING,
        Walk(200e-9, 58218778, 1907, 61000) + kGraphPatch}},
      {"mainline",
       kGraph,
       "latency_budget_seconds: 1",
       {true, false, 1907, RISK_LATENCY, kMainlineWalk + kGraphPatch}},
      {"mainline",
       kGraph,
       "fgraph_active: true",
       {true, false, 1, RISK_NONE, Pass(kNone, 61000) + kGraphPatch}},
      {"mainline",
       kGraph,
       "fgraph_active: false",
       {true, false, 1907, RISK_LATENCY, kMainlineWalk + kGraphPatch}},
  };
}

}  // namespace tracehealth::testing
