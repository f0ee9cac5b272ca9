// Which probe kinds exist on which kernel, and what attaching each one
// patches and costs to detach (PredictFgraphAttach per ProbeKind).
#include <string>

#include "common/enum_names.h"
#include "common/models/fgraph/fgraph_attach.h"
#include "common/models/testing/model_hosts.h"
#include "gtest/gtest.h"

namespace tracehealth {
namespace {

TEST(FgraphAttachTest, PatchingAndDetachPerProbeKind) {
  v1::HostSnapshot s =
      testing::FgraphAttachHost("6.18.2", v1::PREEMPT_MODE_LAZY, 1000);
  s.mutable_fgraph()->set_active(true);
  // kprobe_multi: 100 sites at 1.069 s / 48,712 attach and 0.373 s /
  // 48,712 detach per site (the kprobe_multi bench without IBT).
  v1::AttachPrediction p =
      PredictFgraphAttach(s, v1::PROBE_KIND_KPROBE_MULTI, {});
  EXPECT_NEAR(p.patch_seconds(), 100 * 1.069 / 48712, 1e-12);
  EXPECT_NEAR(p.detach_seconds(), 100 * 0.373 / 48712, 1e-12);
  // On a kernel enforcing IBT: 89.174 s and 13.245 s / 56,140 per site,
  // 1.588 ms and 0.236 ms.
  v1::HostSnapshot ibt = s;
  ibt.mutable_kernel()->set_config_x86_kernel_ibt(true);
  ibt.mutable_cpus()->set_ibt(true);
  p = PredictFgraphAttach(ibt, v1::PROBE_KIND_KPROBE_MULTI, {});
  EXPECT_NEAR(p.patch_seconds(), 100 * 89.174 / 56140, 1e-12);
  EXPECT_NEAR(p.detach_seconds(), 100 * 13.245 / 56140, 1e-12);
  // ... and the same host booted ibt=off: as without IBT.
  ibt.mutable_kernel()->set_cmdline("ro ibt=off");
  p = PredictFgraphAttach(ibt, v1::PROBE_KIND_KPROBE_MULTI, {});
  EXPECT_NEAR(p.patch_seconds(), 100 * 1.069 / 48712, 1e-12);
  // IBT does not change the other kinds' costs.
  ibt.mutable_kernel()->clear_cmdline();
  p = PredictFgraphAttach(ibt, v1::PROBE_KIND_KRETPROBE, {});
  EXPECT_NEAR(p.patch_seconds(), 1.0 / 184, 1e-12);
  // fentry: 17 s / 2,800 attach, 300 s / 2,800 detach per probe.
  p = PredictFgraphAttach(s, v1::PROBE_KIND_FENTRY_FEXIT, {});
  EXPECT_NEAR(p.patch_seconds(), 17.0 / 2800, 1e-12);
  EXPECT_NEAR(p.detach_seconds(), 300.0 / 2800, 1e-12);
  EXPECT_EQ(p.risk(), v1::RISK_NONE);
  // kretprobe: 1 / 184 s.
  p = PredictFgraphAttach(s, v1::PROBE_KIND_KRETPROBE, {});
  EXPECT_NEAR(p.patch_seconds(), 1.0 / 184, 1e-12);
  // The function-graph tracer patches what set_ftrace_filter names...
  s.mutable_fgraph()->set_ftrace_filter_functions(1200);
  p = PredictFgraphAttach(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, {});
  EXPECT_EQ(p.patch_sites(), 1200u);
  EXPECT_NEAR(p.patch_seconds(), 1200e-6, 1e-12);
  // ... and every available function when the filter is empty.
  s.mutable_fgraph()->set_ftrace_filter_functions(0);
  p = PredictFgraphAttach(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, {});
  EXPECT_EQ(p.patch_sites(), 60000u);
}

struct MatrixCase {
  const char* release;
  const char* arch;
  v1::ProbeKind kind;
  bool uses_fgraph;
};

TEST(FgraphAttachTest, ProbeKindByKernelMatrix) {
  const MatrixCase cases[] = {
      {"6.13.0", "x86_64", v1::PROBE_KIND_KPROBE_MULTI, false},
      {"6.14.0", "x86_64", v1::PROBE_KIND_KPROBE_MULTI, true},
      {"6.18.2", "x86_64", v1::PROBE_KIND_KPROBE_MULTI, true},
      // 6.18.31 vs 6.18.32 (the entry-only backport, WITH_REGS).
      {"6.18.31", "x86_64", v1::PROBE_KIND_KPROBE_MULTI, true},
      {"6.18.32", "x86_64", v1::PROBE_KIND_KPROBE_MULTI, false},
      // arm64 needs 6.18.34 (cd06078a38aa).
      {"6.18.33", "aarch64", v1::PROBE_KIND_KPROBE_MULTI, true},
      {"6.18.34", "aarch64", v1::PROBE_KIND_KPROBE_MULTI, false},
      {"6.19", "x86_64", v1::PROBE_KIND_KPROBE_MULTI, false},
      {"6.19", "x86_64", v1::PROBE_KIND_FPROBE_EVENT, false},
      {"6.18.2", "x86_64", v1::PROBE_KIND_FPROBE_EVENT, true},
      {"6.13.0", "x86_64", v1::PROBE_KIND_KPROBE_MULTI_RETURN, false},
      {"6.14.0", "x86_64", v1::PROBE_KIND_KPROBE_MULTI_RETURN, true},
      {"6.19", "x86_64", v1::PROBE_KIND_KPROBE_MULTI_RETURN, true},
      {"6.19", "x86_64", v1::PROBE_KIND_KPROBE_SESSION, true},
      {"6.19", "x86_64", v1::PROBE_KIND_FPROBE_RETURN_EVENT, true},
      {"6.1.0", "x86_64", v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, true},
      {"6.19", "x86_64", v1::PROBE_KIND_FUNCTION_PROFILER, true},
      {"6.19", "x86_64", v1::PROBE_KIND_GRAPH_LATENCY_TRACER, true},
      {"6.13.0", "x86_64", v1::PROBE_KIND_KRETPROBE, false},
      {"6.19", "x86_64", v1::PROBE_KIND_KRETPROBE, false},
      {"6.18.2", "x86_64", v1::PROBE_KIND_FENTRY_FEXIT, false},
  };
  for (const MatrixCase& c : cases) {
    SCOPED_TRACE(::testing::Message()
                 << c.release << " " << c.arch << " " << ProbeKindName(c.kind));
    v1::HostSnapshot s =
        testing::FgraphAttachHost(c.release, v1::PREEMPT_MODE_NONE, 400000);
    s.mutable_kernel()->set_arch(c.arch);
    s.mutable_kernel()->set_preempt_dynamic(false);
    v1::AttachPrediction p = PredictFgraphAttach(s, c.kind, {});
    EXPECT_EQ(p.uses_fgraph(), c.uses_fgraph);
    if (c.uses_fgraph) {
      EXPECT_EQ(p.passes(), 12500u);
      EXPECT_GT(p.walk_seconds(), 20.0);
      EXPECT_EQ(p.risk(), v1::RISK_STALL);
    } else {
      // Costs nothing but its own patching.
      EXPECT_EQ(p.passes(), 0u);
      EXPECT_EQ(p.walk_seconds(), 0.0);
      EXPECT_DOUBLE_EQ(p.latency_seconds(), p.patch_seconds());
      EXPECT_LT(p.latency_seconds(), 0.01);
      EXPECT_EQ(p.risk(), v1::RISK_NONE);
    }
    // Numbers only: the explanation is fgraph_explain's.
    EXPECT_TRUE(p.summary().empty());
    EXPECT_EQ(p.basis().inputs_size(), 0);
  }
}

TEST(FgraphAttachTest, KindsBeforeTheirReleaseAreUnavailable) {
  // BPF kprobe_multi came in 5.18 (0dcac2725406): on 5.4 it is unavailable,
  // not "100 us to patch".
  v1::HostSnapshot s =
      testing::FgraphAttachHost("5.4.280", v1::PREEMPT_MODE_VOLUNTARY, 1000);
  v1::AttachPrediction p =
      PredictFgraphAttach(s, v1::PROBE_KIND_KPROBE_MULTI, {});
  EXPECT_TRUE(p.unavailable());
  EXPECT_EQ(p.patch_sites(), 0u);
  EXPECT_DOUBLE_EQ(p.latency_seconds(), 0);
  s.mutable_kernel()->set_release("5.18.0");
  EXPECT_FALSE(
      PredictFgraphAttach(s, v1::PROBE_KIND_KPROBE_MULTI, {}).unavailable());
  // CONFIG_FPROBE=n likewise.
  s.mutable_kernel()->set_config_fprobe(false);
  p = PredictFgraphAttach(s, v1::PROBE_KIND_KPROBE_MULTI_RETURN, {});
  EXPECT_TRUE(p.unavailable());
  EXPECT_FALSE(p.uses_fgraph());
}

// 7dadeaa6e851 (7.0): an x86-64 kernel runs full or lazy whatever the
// snapshot (or a what-if) says.
TEST(FgraphAttachTest, NoneIsRefusedOn70X86) {
  v1::HostSnapshot s =
      testing::FgraphAttachHost("7.0.0", v1::PREEMPT_MODE_NONE, 400000);
  s.mutable_kernel()->set_arch("x86_64");
  s.mutable_kernel()->set_preempt_dynamic(true);
  v1::AttachPrediction p =
      PredictFgraphAttach(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, {});
  EXPECT_EQ(p.risk(), v1::RISK_LATENCY);
  EXPECT_DOUBLE_EQ(p.non_yielding_seconds(), 0);
  s.mutable_kernel()->set_release("6.19.8");
  EXPECT_EQ(
      PredictFgraphAttach(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, {}).risk(),
      v1::RISK_STALL);
}

}  // namespace
}  // namespace tracehealth
