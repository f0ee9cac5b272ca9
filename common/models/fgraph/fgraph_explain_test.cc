#include "common/models/fgraph/fgraph_explain.h"

#include <string>
#include <vector>

#include "common/models/fgraph/fgraph_attach.h"
#include "common/models/testing/model_hosts.h"
#include "gtest/gtest.h"

namespace tracehealth {
namespace {

using testing::FgraphHost;

v1::AttachPrediction Explained(const v1::HostSnapshot& s, v1::ProbeKind kind,
                               const ModelOptions& options = {}) {
  v1::AttachPrediction p = PredictFgraphAttach(s, kind, options);
  ExplainFgraphAttach(s, options, &p);
  return p;
}

std::vector<std::string> Inputs(const v1::Basis& b) {
  std::vector<std::string> out;
  for (const v1::BasisInput& i : b.inputs()) {
    out.push_back(i.name() + " = " + i.value() + " [" +
                  std::to_string(i.source()) + "]");
  }
  return out;
}

// The README's example: 400,000 threads, all without a shadow stack, B = 32,
// PREEMPT_NONE, 6.16. P = 400000 / 32 = 12500 passes; the 12,499 early ones
// visit 32 * 12499 * 12500 / 2 + 12499 tasks and the last one all 400,000:
// V = 2,500,212,499. Walk = 88.7 ns * V + 2 us * 12500 + 20 ns * 400000 =
// 221.769 + 0.025 + 0.008 = 221.802 s, patching 50,000 default sites at 1 us
// = 0.05 s: T = 221.852 s. Soft lockup at 2 * 10 s: margin 221.802 / 20 =
// 11.09. Stall inverse: 1.3859e-9 N^2 + 1.2685e-7 N = 20 at N = 120,082.
TEST(FgraphExplainTest, ReadmeExampleSummary) {
  v1::AttachPrediction p =
      Explained(FgraphHost("6.16.0", v1::PREEMPT_MODE_NONE, 400000),
                v1::PROBE_KIND_FUNCTION_GRAPH_TRACER);
  EXPECT_EQ(p.summary(),
            "function_graph tracer: first attach walks 400000 threads (400000 "
            "without a shadow "
            "stack) in 12500 passes of 32: about 221.9 s blocked; predicts a "
            "soft lockup "
            "(PREEMPT_NONE, 11.09x the 20 s threshold); stays below it under "
            "120082 NULL-stack "
            "threads.");
  const std::vector<std::string> want = {
      "kernel.release = 6.16.0 [1]",
      "fgraph.available_filter_functions = 50000 [3]",
      "kernel.preempt_mode = PREEMPT_NONE [1]",
      "thresholds.watchdog_thresh = 10 [3]",
      "thresholds.rcu_cpu_stall_timeout = 21 [3]",
      "batch = 32 [2]",
      "fgraph.active = false [1]",
      "threads.total = 400000 [1]",
      "fgraph.null_threads_bound = 400000 (= threads.total) [3]",
  };
  EXPECT_EQ(Inputs(p.basis()), want);
  ASSERT_EQ(p.basis().constants_size(), 4);
  EXPECT_EQ(p.basis().constants(0).name(), "c_visit");
  EXPECT_EQ(p.basis().constants(3).name(), "c_site");
  // The batch came from the release: its row is named.
  ASSERT_EQ(p.basis().feature_rows_size(), 1);
  EXPECT_EQ(p.basis().feature_rows(0),
            "retstack_batch_1024: since never -> 6.16.0: no");
  ASSERT_EQ(p.basis().notes_size(), 2);
  EXPECT_EQ(p.basis().notes(0),
            "function_graph tracer: registers an fgraph user on every kernel");
  EXPECT_EQ(p.basis().notes(1),
            "N_null assumed = N_total (fgraph never active since boot)");
  // 4 inputs assumed: 1 - 0.1 * 4.
  EXPECT_DOUBLE_EQ(p.basis().confidence(), 1.0 - 0.1 - 0.1 - 0.1 - 0.1);
}

TEST(FgraphExplainTest, NoWalkSaysWhyAndNamesTheRows) {
  // 6.19: entry-only fprobes are off fgraph; 100 default sites at 1 us.
  v1::AttachPrediction p =
      Explained(FgraphHost("6.19", v1::PREEMPT_MODE_NONE, 400000),
                v1::PROBE_KIND_KPROBE_MULTI);
  EXPECT_EQ(p.summary(),
            "kprobe_multi: does not use fgraph here (entry-only fprobes no "
            "longer register "
            "fgraph); about 100 us to patch 100 site(s); no stall risk.");
  ASSERT_EQ(p.basis().feature_rows_size(), 2);
  EXPECT_EQ(p.basis().feature_rows(0),
            "fprobe_on_fgraph: since 6.14 -> 6.19: yes");
  EXPECT_EQ(p.basis().feature_rows(1),
            "fprobe_entry_only_off_fgraph: since 6.19; 6.18.y from 6.18.35 -> "
            "6.19: yes");
  // Only c_site: there is no walk.
  ASSERT_EQ(p.basis().constants_size(), 1);
  EXPECT_EQ(p.basis().constants(0).name(), "c_site");

  v1::HostSnapshot active = FgraphHost("6.18.2", v1::PREEMPT_MODE_NONE, 400000);
  active.mutable_fgraph()->set_active(true);
  p = Explained(active, v1::PROBE_KIND_KPROBE_MULTI_RETURN);
  EXPECT_EQ(p.summary(),
            "kprobe_multi return: fgraph already active, no shadow-stack walk; "
            "about 100 us to "
            "patch 100 site(s); no stall risk.");
  EXPECT_EQ(Inputs(p.basis()),
            (std::vector<std::string>{"kernel.release = 6.18.2 [1]",
                                      "sites = 100 [3]",
                                      "fgraph.active = true [1]"}));
  EXPECT_EQ(p.basis().notes(1),
            "fgraph already active: every thread has a shadow stack, no walk");

  v1::HostSnapshot off = FgraphHost("6.18.2", v1::PREEMPT_MODE_NONE, 400000);
  off.mutable_kernel()->set_config_fprobe(false);
  p = Explained(off, v1::PROBE_KIND_KPROBE_SESSION);
  EXPECT_EQ(p.summary(),
            "kprobe session: unavailable on this kernel; about 0 us to patch "
            "100 site(s); no "
            "stall risk.");
  EXPECT_EQ(p.basis().notes(1),
            "CONFIG_FPROBE is off: this probe kind is unavailable");
}

TEST(FgraphExplainTest, UnknownThreadsAndRelease) {
  v1::HostSnapshot s = FgraphHost("6.18.2", v1::PREEMPT_MODE_NONE, 0);
  s.mutable_threads()->clear_total();
  v1::AttachPrediction p = Explained(s, v1::PROBE_KIND_FUNCTION_PROFILER);
  EXPECT_EQ(p.summary(),
            "function profiler: walks every thread's shadow stack, but the "
            "thread count is "
            "unknown.");
  EXPECT_EQ(p.basis().notes(1),
            "threads.total unknown: walk cost cannot be predicted");

  s = FgraphHost("6.18.2", v1::PREEMPT_MODE_NONE, 400000);
  s.mutable_kernel()->clear_release();
  p = Explained(s, v1::PROBE_KIND_FPROBE_EVENT);
  EXPECT_EQ(p.risk(), v1::RISK_UNKNOWN);
  EXPECT_NE(p.summary().find("kernel release unknown, worst case shown."),
            std::string::npos)
      << p.summary();
  EXPECT_EQ(p.basis().notes(0), "kernel release unknown");
  EXPECT_EQ(p.basis().notes(1),
            "fprobe event: kernel release unknown: assumed fprobe on fgraph "
            "(worst case)");
}

TEST(FgraphExplainTest, PreemptibleIsLatencyOnlyAndOverridesAreNamed) {
  v1::HostSnapshot s = FgraphHost("6.18.2", v1::PREEMPT_MODE_LAZY, 100000);
  s.mutable_fgraph()->set_null_threads_bound(3200);
  s.mutable_fgraph()->set_null_threads_basis("fork delta since last active");
  ModelOptions options;
  options.c_visit_seconds = 100e-9;
  options.batch = 1024;
  v1::AttachPrediction p =
      Explained(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, options);
  EXPECT_NE(p.summary().find("; latency only (PREEMPT_LAZY)."),
            std::string::npos)
      << p.summary();
  EXPECT_EQ(p.basis().constants(0).origin(), "override");
  EXPECT_EQ(p.basis().feature_rows_size(), 0);  // the batch was given
  EXPECT_EQ(p.basis().notes(1), "N_null: fork delta since last active");
  EXPECT_EQ(Inputs(p.basis())[5], "batch = 1024 [4]");
  EXPECT_EQ(Inputs(p.basis())[8], "fgraph.null_threads_bound = 3200 [2]");
}

TEST(FgraphExplainTest, ExplainingChangesNoNumberAndReplacesAnOldText) {
  const v1::HostSnapshot s =
      FgraphHost("6.14.0", v1::PREEMPT_MODE_VOLUNTARY, 240000);
  const v1::AttachPrediction numbers =
      PredictFgraphAttach(s, v1::PROBE_KIND_KPROBE_MULTI, {});
  v1::AttachPrediction p = numbers;
  p.set_summary("stale");
  p.mutable_basis()->add_notes("stale");
  ExplainFgraphAttach(s, {}, &p);
  EXPECT_EQ(p.summary().find("stale"), std::string::npos);
  for (const std::string& note : p.basis().notes()) EXPECT_NE(note, "stale");
  v1::AttachPrediction stripped = p;
  stripped.clear_summary();
  stripped.mutable_basis()->clear_inputs();
  stripped.mutable_basis()->clear_constants();
  stripped.mutable_basis()->clear_feature_rows();
  stripped.mutable_basis()->clear_notes();
  EXPECT_EQ(stripped.SerializeAsString(), numbers.SerializeAsString());
}

}  // namespace
}  // namespace tracehealth
