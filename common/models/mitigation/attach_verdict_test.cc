#include "common/models/mitigation/attach_verdict.h"

#include "common/models/testing/model_hosts.h"
#include "gtest/gtest.h"

namespace tracehealth {
namespace {

using testing::FgraphHost;

// 2,000 call sites: patching costs c_site * 2000 = 1 us * 2000 = 2 ms for the
// function-graph tracers (c_site 1 us), 12.14 s for fentry (6.071 ms).
ModelOptions Sites2000() {
  ModelOptions o;
  o.sites = 2000;
  return o;
}

TEST(VerdictOfTest, BudgetBoundaryAndRisks) {
  v1::AttachPrediction p;
  p.set_latency_seconds(2.0);
  p.set_risk(v1::RISK_LATENCY);
  EXPECT_EQ(VerdictOf(p, 2.0), v1::ATTACH_VERDICT_SAFE);  // <= budget
  EXPECT_EQ(VerdictOf(p, 1.999), v1::ATTACH_VERDICT_OVER_BUDGET);
  p.set_risk(v1::RISK_NONE);
  EXPECT_EQ(VerdictOf(p, 1.999), v1::ATTACH_VERDICT_OVER_BUDGET);
  // A stall risk is unsafe whatever the budget.
  p.set_risk(v1::RISK_WARNING);
  EXPECT_EQ(VerdictOf(p, 100), v1::ATTACH_VERDICT_STALL_RISK);
  p.set_risk(v1::RISK_STALL);
  EXPECT_EQ(VerdictOf(p, 100), v1::ATTACH_VERDICT_STALL_RISK);
  p.set_risk(v1::RISK_UNKNOWN);
  EXPECT_EQ(VerdictOf(p, 100), v1::ATTACH_VERDICT_UNKNOWN);
  EXPECT_STREQ(VerdictWord(v1::ATTACH_VERDICT_OVER_BUDGET), "unsafe");
  EXPECT_STREQ(VerdictWord(v1::ATTACH_VERDICT_STALL_RISK), "unsafe");
}

TEST(AssessAttachTest, SoftLockupOnPreemptNone) {
  // 240,000 threads, all without a stack, B = 32: 7,500 passes;
  // V = 32 * 7499 * 7500 / 2 + 7499 + 240000 = 900,127,499 visits;
  // walk = 88.7 ns * V + 2 us * 7500 + 20 ns * 240000 = 79.8611 s;
  // + 2 ms patching = 79.8631 s; soft lockup 79.8611 / 20 = 3.99x.
  AttachAssessment a =
      AssessAttach(FgraphHost("6.16.0", v1::PREEMPT_MODE_NONE, 240000),
                   v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, 2.0, Sites2000());
  EXPECT_EQ(a.verdict, v1::ATTACH_VERDICT_STALL_RISK);
  EXPECT_NEAR(a.prediction.latency_seconds(), 79.8631, 1e-4);
  EXPECT_EQ(a.reason,
            "unsafe: function_graph attach walks 240000 threads: 79.86 s > "
            "2.00 s budget; soft lockup (PREEMPT_NONE, 3.99x the 20.00 s "
            "threshold)");
  // The budget was passed to the model: its inverse is there.
  EXPECT_TRUE(a.prediction.has_threads_at_latency_budget());
}

TEST(AssessAttachTest, OverBudgetOnAPreemptibleKernel) {
  AttachAssessment a =
      AssessAttach(FgraphHost("6.16.0", v1::PREEMPT_MODE_FULL, 240000),
                   v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, 2.0, Sites2000());
  EXPECT_EQ(a.verdict, v1::ATTACH_VERDICT_OVER_BUDGET);
  EXPECT_EQ(a.reason,
            "unsafe: function_graph attach walks 240000 threads: 79.86 s > "
            "2.00 s budget");
}

TEST(AssessAttachTest, WithinBudgetButWithinTwiceTheLockupThreshold) {
  // 93,000 threads: 2,907 passes (the last one partial, no empty pass);
  // V = 32 * 2906 * 2907 / 2 + 2906 + 93000 = 135,259,778;
  // walk = 88.7 ns * V + 2 us * 2907 + 20 ns * 93000 = 12.0052 s, 0.60x of
  // the 20 s soft-lockup threshold: a warning, under a 60 s budget.
  AttachAssessment a =
      AssessAttach(FgraphHost("6.16.0", v1::PREEMPT_MODE_NONE, 93000),
                   v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, 60, Sites2000());
  EXPECT_EQ(a.verdict, v1::ATTACH_VERDICT_STALL_RISK);
  EXPECT_EQ(a.reason,
            "unsafe: function_graph attach walks 93000 threads: 12.01 s <= "
            "60.00 s budget; within 2x of the soft-lockup threshold "
            "(PREEMPT_NONE, 0.60x the 20.00 s threshold)");
}

TEST(AssessAttachTest, FgraphAlreadyActiveCostsOnePass) {
  // 6.16 (6.11+: more than one fgraph user): no shadow-stack walk, but
  // init_task_vars() visits every thread once under tasklist_lock.
  // PREEMPT_NONE without preempt_dynamic: the build cannot be told, so
  // c_visit is the CONFIG_PREEMPTION one (88.7 ns, the larger).
  // Pass = 88.7 ns * 240000 + 2 us = 21.290 ms; + 2 ms patching = 23.290 ms.
  v1::HostSnapshot s = FgraphHost("6.16.0", v1::PREEMPT_MODE_NONE, 240000);
  s.mutable_fgraph()->set_active(true);
  s.mutable_fgraph()->set_null_threads_bound(0);
  AttachAssessment a =
      AssessAttach(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, 2.0, Sites2000());
  EXPECT_EQ(a.verdict, v1::ATTACH_VERDICT_SAFE);
  EXPECT_NEAR(a.prediction.latency_seconds(), 0.023290, 1e-9);
  EXPECT_EQ(a.reason,
            "safe: function_graph attach finds fgraph already active: no "
            "shadow-stack walk, one pass over 240000 threads (init_task_vars, "
            "forks and exits wait): 23.3 ms <= 2.00 s budget");
  // Both sides of the budget: 23.290 ms against 23.3 ms and 23.2 ms.
  a = AssessAttach(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, 0.0233,
                   Sites2000());
  EXPECT_EQ(a.verdict, v1::ATTACH_VERDICT_SAFE);
  a = AssessAttach(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, 0.0232,
                   Sites2000());
  EXPECT_EQ(a.verdict, v1::ATTACH_VERDICT_OVER_BUDGET);
}

TEST(AssessAttachTest, ASecondGraphUserBefore611IsRefused) {
  // 6.10: register_ftrace_graph() takes one user; another gets -EBUSY.
  // Nothing is walked or patched: no harm to the host, but no attach.
  v1::HostSnapshot s = FgraphHost("6.10.3", v1::PREEMPT_MODE_NONE, 240000);
  s.mutable_fgraph()->set_active(true);
  s.mutable_fgraph()->set_null_threads_bound(0);
  AttachAssessment a =
      AssessAttach(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, 2.0, Sites2000());
  EXPECT_TRUE(a.prediction.busy());
  EXPECT_EQ(a.verdict, v1::ATTACH_VERDICT_SAFE);
  EXPECT_EQ(a.reason,
            "safe: function_graph attach is refused by the kernel (-EBUSY): "
            "fgraph is already active and takes one user before 6.11; nothing "
            "is patched");
}

TEST(AssessAttachTest, AKindThatDoesNotUseFgraph) {
  // fentry/fexit: BPF trampolines, no walk, but 17 s / 2,800 probes =
  // 6.071 ms per probe (bpftrace PR #3053): 2000 * 6.071 ms = 12.14 s, over
  // a 2 s budget and no stall (no walk, the patching reschedules).
  AttachAssessment a =
      AssessAttach(FgraphHost("6.16.0", v1::PREEMPT_MODE_NONE, 240000),
                   v1::PROBE_KIND_FENTRY_FEXIT, 2.0, Sites2000());
  EXPECT_EQ(a.verdict, v1::ATTACH_VERDICT_OVER_BUDGET);
  EXPECT_EQ(a.reason,
            "unsafe: fentry attach does not use fgraph on this kernel: 12.14 s "
            "> 2.00 s budget");
  // 329 probes: 1.9975 s, within 2 s; 330: 2.0036 s, over.
  ModelOptions o;
  o.sites = 329;
  a = AssessAttach(FgraphHost("6.16.0", v1::PREEMPT_MODE_NONE, 240000),
                   v1::PROBE_KIND_FENTRY_FEXIT, 2.0, o);
  EXPECT_EQ(a.verdict, v1::ATTACH_VERDICT_SAFE);
  EXPECT_EQ(a.reason,
            "safe: fentry attach does not use fgraph on this kernel: 2.00 s "
            "<= 2.00 s budget");
  o.sites = 330;
  a = AssessAttach(FgraphHost("6.16.0", v1::PREEMPT_MODE_NONE, 240000),
                   v1::PROBE_KIND_FENTRY_FEXIT, 2.0, o);
  EXPECT_EQ(a.verdict, v1::ATTACH_VERDICT_OVER_BUDGET);
}

TEST(AssessAttachTest, ThreadCountUnknown) {
  v1::HostSnapshot s = FgraphHost("6.16.0", v1::PREEMPT_MODE_NONE, 1);
  s.mutable_threads()->clear_total();
  v1::UnknownInput* u = s.add_unknown();
  u->set_input("threads.total");
  u->set_reason("/proc/loadavg: not found");
  AttachAssessment a =
      AssessAttach(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, 2.0, Sites2000());
  EXPECT_EQ(a.verdict, v1::ATTACH_VERDICT_UNKNOWN);
  EXPECT_EQ(a.reason,
            "unknown: function_graph: thread count unknown (/proc/loadavg: "
            "not found): the shadow-stack walk cannot be sized");
}

TEST(AssessAttachTest, ReleaseUnknownForAnFprobeKind) {
  v1::HostSnapshot s = FgraphHost("6.16.0", v1::PREEMPT_MODE_NONE, 240000);
  s.mutable_kernel()->clear_release();
  AttachAssessment a =
      AssessAttach(s, v1::PROBE_KIND_KPROBE_MULTI_RETURN, 2.0, Sites2000());
  EXPECT_EQ(a.verdict, v1::ATTACH_VERDICT_UNKNOWN);
  EXPECT_EQ(a.reason,
            "unknown: kprobe_multi_return: kernel release unknown: cannot "
            "tell whether kprobe_multi_return uses fgraph");
}

TEST(AssessAttachTest, FgraphActivityUnknownDecidesOnlyWhenItMatters) {
  // 412 threads, B = 32: 13 passes; V = 32 * 12 * 13 / 2 + 12 + 412 = 2,920;
  // VOLUNTARY without preempt_dynamic: c_visit 88.7 ns (the build cannot be
  // told); walk = 88.7 ns * 2920 + 2 us * 13 + 20 ns * 412 = 293.2 us; with
  // 10 sites (10 us) 303 us if fgraph is inactive. If it is active (6.16:
  // a second user) one pass, 88.7 ns * 412 + 2 us = 38.5 us, + 10 us =
  // 48.5 us.
  v1::HostSnapshot s = FgraphHost("6.16.0", v1::PREEMPT_MODE_VOLUNTARY, 412);
  s.mutable_fgraph()->clear_active();
  ModelOptions o;
  o.sites = 10;
  AttachAssessment a =
      AssessAttach(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, 100e-6, o);
  EXPECT_EQ(a.verdict, v1::ATTACH_VERDICT_UNKNOWN);
  EXPECT_EQ(a.reason,
            "unknown: function_graph: fgraph activity unknown: function_graph "
            "attach walks 412 threads: 303 us > 100 us budget if fgraph is "
            "inactive, 49 us if it is already active");
  // Over 40 us either way: unsafe, whatever fgraph's state.
  a = AssessAttach(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, 40e-6, o);
  EXPECT_EQ(a.verdict, v1::ATTACH_VERDICT_OVER_BUDGET);
  // Within 1 ms either way: safe.
  a = AssessAttach(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, 1e-3, o);
  EXPECT_EQ(a.verdict, v1::ATTACH_VERDICT_SAFE);
  // 6.1: an active fgraph would refuse the attach (-EBUSY, one user before
  // 6.11): no cost then, so the answer still depends on the missing input.
  s.mutable_kernel()->set_release("6.1.0");
  a = AssessAttach(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, 100e-6, o);
  EXPECT_EQ(a.verdict, v1::ATTACH_VERDICT_UNKNOWN);
  EXPECT_EQ(a.reason,
            "unknown: function_graph: fgraph activity unknown: function_graph "
            "attach walks 412 threads: 303 us > 100 us budget if fgraph is "
            "inactive, refused by the kernel (-EBUSY) if it is already active");
}

}  // namespace
}  // namespace tracehealth
