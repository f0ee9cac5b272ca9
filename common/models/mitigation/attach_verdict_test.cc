#include "common/models/mitigation/attach_verdict.h"

#include "common/models/testing/model_hosts.h"
#include "gtest/gtest.h"

namespace tracehealth {
namespace {

using testing::FgraphHost;

// 2,000 call sites: patching costs c_site * 2000 = 1 us * 2000 = 2 ms.
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

TEST(AssessAttachTest, FgraphAlreadyActiveIsSafe) {
  v1::HostSnapshot s = FgraphHost("6.16.0", v1::PREEMPT_MODE_NONE, 240000);
  s.mutable_fgraph()->set_active(true);
  s.mutable_fgraph()->set_null_threads_bound(0);
  AttachAssessment a =
      AssessAttach(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, 2.0, Sites2000());
  EXPECT_EQ(a.verdict, v1::ATTACH_VERDICT_SAFE);
  EXPECT_EQ(a.reason,
            "safe: function_graph attach finds fgraph already active, no "
            "shadow-stack walk: 2.0 ms <= 2.00 s budget");
  // 2 ms against a 1.9 ms budget: over.
  a = AssessAttach(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, 0.0019,
                   Sites2000());
  EXPECT_EQ(a.verdict, v1::ATTACH_VERDICT_OVER_BUDGET);
}

TEST(AssessAttachTest, AKindThatDoesNotUseFgraph) {
  AttachAssessment a =
      AssessAttach(FgraphHost("6.16.0", v1::PREEMPT_MODE_NONE, 240000),
                   v1::PROBE_KIND_FENTRY_FEXIT, 2.0, Sites2000());
  EXPECT_EQ(a.verdict, v1::ATTACH_VERDICT_SAFE);
  EXPECT_EQ(a.reason,
            "safe: fentry attach does not use fgraph on this kernel: 2.0 ms "
            "<= 2.00 s budget");
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
  // walk = 88.7 ns * 2920 + 2 us * 13 + 20 ns * 412 = 293.2 us; with 10
  // sites (10 us) 303 us if fgraph is inactive, 10 us if it is active.
  v1::HostSnapshot s = FgraphHost("6.1.0", v1::PREEMPT_MODE_VOLUNTARY, 412);
  s.mutable_fgraph()->clear_active();
  ModelOptions o;
  o.sites = 10;
  AttachAssessment a =
      AssessAttach(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, 100e-6, o);
  EXPECT_EQ(a.verdict, v1::ATTACH_VERDICT_UNKNOWN);
  EXPECT_EQ(a.reason,
            "unknown: function_graph: fgraph activity unknown: function_graph "
            "attach walks 412 threads: 303 us > 100 us budget if fgraph is "
            "inactive, 10 us if it is already active");
  // Over 1 us either way: unsafe, whatever fgraph's state.
  a = AssessAttach(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, 1e-6, o);
  EXPECT_EQ(a.verdict, v1::ATTACH_VERDICT_OVER_BUDGET);
  // Within 1 ms either way: safe.
  a = AssessAttach(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, 1e-3, o);
  EXPECT_EQ(a.verdict, v1::ATTACH_VERDICT_SAFE);
}

}  // namespace
}  // namespace tracehealth
