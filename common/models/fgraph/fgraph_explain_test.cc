#include "common/models/fgraph/fgraph_explain.h"

#include <algorithm>
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
// 11.09. Inverses: at 400,000 threads 18,429 NULL ones reach 20 s; an
// all-NULL host 120,082 (1.3859e-9 N^2 + 1.2685e-7 N = 20). c_visit would
// have to be (20 - 0.025 - 0.008) / 221.769 = 0.09x to stay below.
TEST(FgraphExplainTest, ReadmeExampleSummary) {
  v1::AttachPrediction p =
      Explained(FgraphHost("6.16.0", v1::PREEMPT_MODE_NONE, 400000),
                v1::PROBE_KIND_FUNCTION_GRAPH_TRACER);
  EXPECT_EQ(p.summary(),
            "function_graph tracer: first attach walks 400000 threads (400000 "
            "without a shadow stack) in 12500 passes of 32: about 221.9 s "
            "blocked, holding ftrace_lock (other attaches, tracer changes and "
            "module loads wait); predicts a soft lockup (PREEMPT_NONE, 11.09x "
            "the 20 s threshold); it stays below it under 18429 NULL-stack "
            "threads at this thread count, or 120082 threads all without one; "
            "stays below the soft-lockup threshold only if c_visit is under "
            "0.09x the fitted value (an unknown CPU).");
  const std::vector<std::string> want = {
      "kernel.release = 6.16.0 [1]",
      "fgraph.ftrace_filter_functions = unknown (assumed empty) [3]",
      "fgraph.available_filter_functions = 50000 [3]",
      "kernel.preempt_mode = PREEMPT_NONE [1]",
      "kernel.preempt_dynamic = unknown (assumed a PREEMPTION build) [3]",
      "kernel.config_preempt_rcu = unknown (assumed n) [3]",
      "thresholds.watchdog_thresh = 10 [3]",
      "thresholds.rcu_cpu_stall_timeout = 21 [3]",
      "batch = 32 [2]",
      "fgraph.active = false [1]",
      "threads.total = 400000 [1]",
      "fgraph.null_threads_bound = 400000 (= threads.total) [3]",
      "cpus.l3_cache_bytes = unknown (one price for every pass) [3]",
      "cpus.model_name = unknown [3]",
  };
  EXPECT_EQ(Inputs(p.basis()), want);
  ASSERT_EQ(p.basis().constants_size(), 5);
  EXPECT_EQ(p.basis().constants(0).name(), "c_visit");
  EXPECT_EQ(p.basis().constants(0).anchor(), v1::ANCHOR_FIT);
  EXPECT_EQ(p.basis().constants(3).name(), "c_site");
  EXPECT_EQ(p.basis().constants(3).anchor(), v1::ANCHOR_ASSUMPTION);
  EXPECT_EQ(p.basis().constants(4).name(), "c_site_detach");
  // The batch came from the release, the walk's lock and stack size too.
  const std::vector<std::string> rows(p.basis().feature_rows().begin(),
                                      p.basis().feature_rows().end());
  EXPECT_EQ(rows, (std::vector<std::string>{
                      "retstack_batch_1024: since never -> 6.16.0: no",
                      "fgraph_walk_rcu: since 5.10 -> 6.16.0: yes",
                      "shadow_stack_page_kmalloc: since 6.11 -> 6.16.0: yes",
                      "shadow_stack_4k: since 6.13 -> 6.16.0: yes",
                  }));
  const std::vector<std::string> notes(p.basis().notes().begin(),
                                       p.basis().notes().end());
  EXPECT_EQ(notes,
            (std::vector<std::string>{
                "function_graph tracer: registers an fgraph user on every "
                "kernel",
                "N_null assumed = N_total (fgraph never active since boot)",
                "shadow stacks: 400000 x 4096 B = 1.6 GB, kept until each "
                "thread exits, charged to no cgroup",
                "PREEMPT_NONE: the whole walk runs without a reschedule point",
                "no PREEMPT_RCU: a quiescent state needs a reschedule point",
                "c_visit applied to an unknown CPU (fitted on a 60-core "
                "Sapphire Rapids): confidence lowered",
            }));
  // 9 inputs assumed: 1 - 0.1 * 9.
  EXPECT_NEAR(p.basis().confidence(), 1.0 - 9 * 0.1, 1e-12);
}

// The command: 6.1, PREEMPT_VOLUNTARY, 128,000 threads. The walk
// blocks 22.7 s but reschedules every pass (88.7 ns * 128,000 + 2 us =
// 11.4 ms): latency, no lockup. The longest stretch without a reschedule
// point is the patching that follows, 50,000 sites at 1 us (no reschedule
// point in ftrace_replace_code() on x86, or where the architecture is not
// known): 50 ms, named.
// The same host with a 32 MiB L3: the seed's level starts at 33,554,432 /
// 128 = 262,144 tasks. Early pass i visits 1 + 32 i tasks, so passes 8,192
// to 12,499 (262,145 tasks and up) and the last (400,000) are beyond it:
// 4,308 + 32 x (8,192 + 12,499) x 4,308 / 2 + 400,000 = 1,426,593,556 of the
// 2,500,212,499 visits, each 75 ns dearer. Walk = 88.7 ns x V + 75 ns x
// 1,426,593,556 + 0.025 + 0.008 = 221.769 + 106.994 + 0.033 = 328.796 s.
// With 112.5 MiB (921,600 tasks) every pass fits: 221.802 s as above.
TEST(FgraphExplainTest, PassesBeyondTheL3CostAMissEachVisit) {
  v1::HostSnapshot s = FgraphHost("6.16.0", v1::PREEMPT_MODE_NONE, 400000);
  s.mutable_cpus()->set_l3_cache_bytes(32 << 20);
  v1::AttachPrediction p = Explained(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER);
  EXPECT_DOUBLE_EQ(p.visits(), 2500212499);
  EXPECT_NEAR(p.walk_seconds(),
              88.7e-9 * 2500212499 + 75e-9 * 1426593556 + 0.025 + 0.008, 1e-6);
  std::vector<std::string> inputs = Inputs(p.basis());
  EXPECT_NE(std::find(inputs.begin(), inputs.end(),
                      "cpus.l3_cache_bytes = 33554432 (262144 tasks at 128 B) "
                      "[1]"),
            inputs.end());
  ASSERT_EQ(p.basis().constants_size(), 6);
  EXPECT_EQ(p.basis().constants(2).name(), "c_miss");
  EXPECT_DOUBLE_EQ(p.basis().constants(2).value(), 75e-9);
  EXPECT_EQ(p.basis().constants(2).anchor(), v1::ANCHOR_ASSUMPTION);
  // A task less of L3 (262,143 tasks): the same passes beyond it (pass
  // 8,191 visits 262,113); two more (262,146): pass 8,192 (262,145) fits.
  s.mutable_cpus()->set_l3_cache_bytes((32 << 20) - 128);
  EXPECT_NEAR(Explained(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER).walk_seconds(),
              88.7e-9 * 2500212499 + 75e-9 * 1426593556 + 0.033, 1e-6);
  s.mutable_cpus()->set_l3_cache_bytes((32 << 20) + 256);
  p = Explained(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER);
  EXPECT_NEAR(p.walk_seconds(),
              88.7e-9 * 2500212499 + 75e-9 * (1426593556 - 262145) + 0.033,
              1e-6);
  s.mutable_cpus()->set_l3_cache_bytes(117964800);
  p = Explained(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER);
  EXPECT_NEAR(p.walk_seconds(), 221.802, 1e-3);
  ASSERT_EQ(p.basis().constants_size(), 6);  // said, though no pass reaches it
  // A calibrated host prices with its own levels: no L3 input or c_miss.
  ModelOptions calibrated;
  CalibratedConstants k;
  k.c_visit_seconds = 88.7e-9;
  k.source = "this host's calibration";
  calibrated.calibration = k;
  s.mutable_cpus()->set_l3_cache_bytes(32 << 20);
  p = PredictFgraphAttach(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, calibrated);
  EXPECT_NEAR(p.walk_seconds(), 221.802, 1e-3);
}

TEST(FgraphExplainTest, VoluntarySaysItReschedules) {
  v1::AttachPrediction p =
      Explained(FgraphHost("6.1.0", v1::PREEMPT_MODE_VOLUNTARY, 128000),
                v1::PROBE_KIND_FUNCTION_GRAPH_TRACER);
  EXPECT_EQ(p.risk(), v1::RISK_LATENCY);
  EXPECT_NE(p.summary().find("no stall: PREEMPT_VOLUNTARY reschedules every "
                             "pass (11.4 ms); patching 50000 site(s) runs "
                             "50.0 ms without a reschedule point "
                             "(ftrace_replace_code() on an unknown "
                             "architecture has none)."),
            std::string::npos)
      << p.summary();
  EXPECT_DOUBLE_EQ(p.non_yielding_seconds(), 0.05);
  EXPECT_EQ(p.summary().find("soft lockup"), std::string::npos) << p.summary();
  // 6.1: 2 KiB shadow stacks (kmalloc-2048).
  bool stacks = false;
  for (const std::string& n : p.basis().notes()) {
    stacks |= n ==
              "shadow stacks: 128000 x 2048 B = 262 MB, kept until each "
              "thread exits, charged to no cgroup";
  }
  EXPECT_TRUE(stacks);
}

// A QEMU TCG guest at 64,000 threads booted preempt=none: 5.7 s, no stall
// by the fitted constant, but 3.5x off would cross the soft-lockup
// threshold and the CPU is emulated.
TEST(FgraphExplainTest, EmulatedCpuVerdictNamesTheFactor) {
  v1::HostSnapshot s = FgraphHost("6.1.0", v1::PREEMPT_MODE_NONE, 64000);
  s.mutable_kernel()->set_preempt_dynamic(true);
  s.mutable_cpus()->set_model_name("QEMU TCG CPU version 2.5+");
  s.mutable_cpus()->set_hypervisor(true);
  ModelOptions options;
  options.sites = 0;
  v1::AttachPrediction p =
      Explained(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, options);
  EXPECT_NE(p.summary().find(
                "; no stall expected; crosses the soft-lockup threshold if "
                "c_visit is 3.5x the fitted value (an emulated CPU: QEMU TCG "
                "CPU version 2.5+)."),
            std::string::npos)
      << p.summary();
  bool said = false;
  for (const std::string& n : p.basis().notes()) {
    said |= n ==
            "c_visit applied to an emulated CPU (fitted on a 60-core "
            "Sapphire Rapids): confidence lowered";
  }
  EXPECT_TRUE(said);
}

TEST(FgraphExplainTest, NoWalkSaysWhyAndNamesTheRows) {
  // 6.19: entry-only fprobes are off fgraph; 100 default sites at 21.9 us
  // (1.069 s / 48,712) = 2.2 ms, detach 7.66 us each = 766 us.
  v1::AttachPrediction p =
      Explained(FgraphHost("6.19", v1::PREEMPT_MODE_NONE, 400000),
                v1::PROBE_KIND_KPROBE_MULTI);
  EXPECT_EQ(p.summary(),
            "kprobe_multi: does not use fgraph here (entry-only fprobes no "
            "longer register fgraph); about 2.2 ms to patch 100 site(s), "
            "766 us to detach; no stall risk.");
  ASSERT_EQ(p.basis().feature_rows_size(), 3);
  EXPECT_EQ(p.basis().feature_rows(0),
            "fprobe_on_fgraph: since 6.14 -> 6.19: yes");
  EXPECT_EQ(p.basis().feature_rows(1),
            "fprobe_entry_only_off_fgraph: since 6.19; 6.18.y from 6.18.32 -> "
            "6.19: yes");
  EXPECT_EQ(p.basis().feature_rows(2),
            "kprobe_multi_link: since 5.18 -> 6.19: yes");
  // Only the per-site costs, both published: there is no walk.
  ASSERT_EQ(p.basis().constants_size(), 2);
  EXPECT_EQ(p.basis().constants(0).name(), "c_site");
  EXPECT_EQ(p.basis().constants(0).anchor(), v1::ANCHOR_PUBLISHED);

  v1::HostSnapshot active = FgraphHost("6.10.5", v1::PREEMPT_MODE_NONE, 400000);
  active.mutable_fgraph()->set_active(true);
  p = Explained(active, v1::PROBE_KIND_FUNCTION_PROFILER);
  EXPECT_EQ(p.summary(),
            "function profiler: fgraph already has its one user on this "
            "kernel: the attach fails with EBUSY.");

  v1::HostSnapshot off = FgraphHost("6.18.2", v1::PREEMPT_MODE_NONE, 400000);
  off.mutable_kernel()->set_config_fprobe(false);
  p = Explained(off, v1::PROBE_KIND_KPROBE_SESSION);
  EXPECT_EQ(p.summary(), "kprobe session: unavailable on this kernel.");
  EXPECT_EQ(p.basis().notes(1),
            "CONFIG_FPROBE is off: this probe kind is unavailable");
  p = Explained(FgraphHost("5.4.280", v1::PREEMPT_MODE_NONE, 400000),
                v1::PROBE_KIND_KPROBE_MULTI);
  EXPECT_EQ(p.summary(), "kprobe_multi: unavailable on this kernel.");
  EXPECT_EQ(p.basis().notes(1),
            "this kernel predates the probe kind: unavailable");
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

// The basis names c_visit's source: the seed default, or the calibration
// (this host's or its class's) with the fixed cost beside it.
TEST(FgraphExplainTest, CVisitSourceIsNamed) {
  v1::HostSnapshot s = FgraphHost("6.1.0", v1::PREEMPT_MODE_NONE, 64000);
  s.mutable_kernel()->set_preempt_dynamic(true);
  s.mutable_fgraph()->set_null_threads_bound(64000);
  v1::AttachPrediction p = Explained(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER);
  ASSERT_EQ(p.basis().constants(0).name(), "c_visit");
  EXPECT_EQ(p.basis().constants(0).origin().rfind("seed default: ", 0), 0u)
      << p.basis().constants(0).origin();
  EXPECT_EQ(p.basis().constants(0).anchor(), v1::ANCHOR_FIT);

  ModelOptions options;
  options.calibration = CalibratedConstants{
      150e-9, 2e-3, "4 canaries of class QEMU TCG CPU version 2.5+ / 6.1"};
  p = Explained(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, options);
  EXPECT_EQ(p.basis().constants(0).value(), 150e-9);
  EXPECT_EQ(p.basis().constants(0).origin(),
            "4 canaries of class QEMU TCG CPU version 2.5+ / 6.1");
  EXPECT_EQ(p.basis().constants(0).anchor(), v1::ANCHOR_CALIBRATED);
  const v1::BasisConstant* fixed = nullptr;
  for (const v1::BasisConstant& c : p.basis().constants()) {
    if (c.name() == "c_fixed") fixed = &c;
  }
  ASSERT_NE(fixed, nullptr);
  EXPECT_EQ(fixed->value(), 2e-3);
  EXPECT_EQ(fixed->origin(),
            "4 canaries of class QEMU TCG CPU version 2.5+ / 6.1");
  EXPECT_EQ(fixed->anchor(), v1::ANCHOR_CALIBRATED);
  // An override wins over the calibration.
  options.c_visit_seconds = 90e-9;
  p = Explained(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, options);
  EXPECT_EQ(p.basis().constants(0).origin(), "override");
  for (const v1::BasisConstant& c : p.basis().constants()) {
    EXPECT_NE(c.name(), "c_fixed");
  }
}

TEST(FgraphExplainTest, PreemptibleIsLatencyOnlyAndOverridesAreNamed) {
  v1::HostSnapshot s = FgraphHost("6.18.2", v1::PREEMPT_MODE_LAZY, 100000);
  s.mutable_kernel()->set_preempt_dynamic(true);
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
  EXPECT_EQ(p.basis().constants(0).anchor(), v1::ANCHOR_OVERRIDE);
  // The batch was given: no retstack row; the walk's rows remain.
  for (const std::string& row : p.basis().feature_rows()) {
    EXPECT_EQ(row.find("retstack_batch_1024"), std::string::npos);
  }
  EXPECT_EQ(p.basis().notes(1),
            "N_null: fork delta since last active; placed at the tail of the "
            "task list (worst case; at the head 10.7 ms)");
  const std::vector<std::string> in = Inputs(p.basis());
  EXPECT_NE(std::find(in.begin(), in.end(), "batch = 1024 [4]"), in.end());
  EXPECT_NE(
      std::find(in.begin(), in.end(), "fgraph.null_threads_bound = 3200 [2]"),
      in.end());
  // A static lazy build on 6.15+ has no PREEMPT_RCU: each pass runs with
  // preemption off (88.7 ns * 100,000 + 2 us = 8.9 ms).
  s.mutable_kernel()->set_preempt_dynamic(false);
  p = Explained(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER);
  EXPECT_NE(p.summary().find("no stall: PREEMPT_LAZY preempts between passes "
                             "(8.9 ms each with preemption off)"),
            std::string::npos)
      << p.summary();
}

// The seed's 400,000-thread PREEMPT_LAZY walk (221.8018 s with no patching)
// against a 120 s hung_task_timeout_secs: 1.85x, said after the stall
// verdict; with hung_task_panic, the panic too; below the timeout, or with
// the timeout unknown, nothing.
TEST(FgraphExplainTest, HungTaskIsSaidWhenTheHoldReachesTheTimeout) {
  v1::HostSnapshot s = FgraphHost("6.16.0", v1::PREEMPT_MODE_LAZY, 400000);
  s.mutable_kernel()->set_preempt_dynamic(true);
  s.mutable_thresholds()->set_hung_task_timeout_seconds(120);
  ModelOptions options;
  options.sites = 0;
  v1::AttachPrediction p =
      Explained(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, options);
  const std::string said =
      "; latency only (PREEMPT_LAZY); tasks waiting for ftrace_lock are "
      "reported hung (1.85x the 120 s hung_task_timeout_secs)";
  EXPECT_NE(p.summary().find(said + "."), std::string::npos) << p.summary();
  s.mutable_thresholds()->set_hung_task_panic(true);
  p = Explained(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, options);
  EXPECT_NE(p.summary().find(said + ", and hung_task_panic panics the host."),
            std::string::npos)
      << p.summary();
  s.mutable_thresholds()->set_hung_task_timeout_seconds(222);
  p = Explained(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, options);
  EXPECT_EQ(p.summary().find("hung"), std::string::npos) << p.summary();
  s.mutable_thresholds()->clear_hung_task_timeout_seconds();
  p = Explained(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, options);
  EXPECT_EQ(p.summary().find("hung"), std::string::npos) << p.summary();
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
