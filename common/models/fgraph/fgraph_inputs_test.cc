// The inputs of PredictFgraphAttach: unknown ones named, defaults lowering
// the confidence, vendor kernel releases read as their upstream release.
#include <string>

#include "common/models/fgraph/fgraph_attach.h"
#include "common/models/testing/model_hosts.h"
#include "gtest/gtest.h"

namespace tracehealth {
namespace {

TEST(FgraphAttachTest, UnknownInputsAreExplicit) {
  v1::HostSnapshot s;
  v1::AttachPrediction p =
      PredictFgraphAttach(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, {});
  EXPECT_EQ(p.risk(), v1::RISK_UNKNOWN);
  EXPECT_LT(p.basis().confidence(), 0.8);
  // Unknown preemption with a walk that would stall a PREEMPT_NONE kernel.
  s = testing::FgraphAttachHost("6.18.2", v1::PREEMPT_MODE_UNKNOWN, 400000);
  p = PredictFgraphAttach(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, {});
  EXPECT_EQ(p.risk(), v1::RISK_UNKNOWN);
  for (const auto& c : p.checks()) EXPECT_FALSE(c.applies());
  // Unknown release for an fprobe kind: worst case, risk unknown.
  s = testing::FgraphAttachHost("6.18.2", v1::PREEMPT_MODE_NONE, 400000);
  s.mutable_kernel()->clear_release();
  p = PredictFgraphAttach(s, v1::PROBE_KIND_KPROBE_MULTI, {});
  EXPECT_TRUE(p.uses_fgraph());
  EXPECT_EQ(p.risk(), v1::RISK_UNKNOWN);
}

// Confidence = 1 - 0.1 per default input (and per inferred feature row
// next to the release) - 0.3 per unknown one - the CPU class's loss.
TEST(FgraphAttachTest, ConfidenceCountsAssumedInputs) {
  // Everything measured: release, filter, available functions, preemption
  // (PREEMPT_DYNAMIC, PREEMPT_RCU), both thresholds, fgraph.active,
  // threads, N_null bound, a Sapphire Rapids CPU.
  v1::HostSnapshot s =
      testing::FgraphAttachHost("6.18.2", v1::PREEMPT_MODE_NONE, 1000);
  s.mutable_kernel()->set_preempt_dynamic(true);
  s.mutable_kernel()->set_config_preempt_rcu(true);
  s.mutable_thresholds()->set_watchdog_thresh_seconds(10);
  s.mutable_thresholds()->set_rcu_cpu_stall_timeout_seconds(21);
  s.mutable_fgraph()->set_null_threads_bound(10);
  s.mutable_fgraph()->set_ftrace_filter_functions(0);
  s.mutable_cpus()->set_model_name("Intel(R) Xeon(R) Platinum 8480+");
  s.mutable_cpus()->set_l3_cache_bytes(117964800);  // its 112.5 MiB
  EXPECT_DOUBLE_EQ(
      PredictFgraphAttach(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, {})
          .basis()
          .confidence(),
      1.0);
  // Defaults: the filter, preempt_dynamic, PREEMPT_RCU, both thresholds,
  // N_null, the CPU model and the L3's size: 8 x 0.1.
  s = testing::FgraphAttachHost("6.18.2", v1::PREEMPT_MODE_NONE, 1000);
  EXPECT_NEAR(PredictFgraphAttach(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, {})
                  .basis()
                  .confidence(),
              1.0 - 8 * 0.1, 1e-12);
  // PREEMPT_VOLUNTARY does not need PREEMPT_RCU: 7 x 0.1.
  s.mutable_kernel()->set_preempt_mode(v1::PREEMPT_MODE_VOLUNTARY);
  EXPECT_NEAR(PredictFgraphAttach(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, {})
                  .basis()
                  .confidence(),
              1.0 - 7 * 0.1, 1e-12);
  // kretprobe: no walk, nothing assumed.
  EXPECT_DOUBLE_EQ(
      PredictFgraphAttach(s, v1::PROBE_KIND_KRETPROBE, {}).basis().confidence(),
      1.0);
  // A second fgraph user's pass (6.14 has multi-user fgraph): the default
  // sites, IBT (neither the config nor the CPU's flags known),
  // preempt_dynamic, both thresholds, the L3's size and the CPU model
  // (7 x 0.1), and on 6.14.0 the inferred fprobe_on_fgraph row (6.14) next
  // to the release (0.1 more); on 6.15 the row is certain.
  s.mutable_kernel()->set_release("6.14.0");
  s.mutable_fgraph()->set_active(true);
  EXPECT_NEAR(PredictFgraphAttach(s, v1::PROBE_KIND_KPROBE_MULTI_RETURN, {})
                  .basis()
                  .confidence(),
              1.0 - 8 * 0.1, 1e-12);
  s.mutable_kernel()->set_release("6.15.0");
  EXPECT_NEAR(PredictFgraphAttach(s, v1::PROBE_KIND_KPROBE_MULTI_RETURN, {})
                  .basis()
                  .confidence(),
              1.0 - 7 * 0.1, 1e-12);
  // IBT known (a build without it): 0.1 back.
  s.mutable_kernel()->set_config_x86_kernel_ibt(false);
  EXPECT_NEAR(PredictFgraphAttach(s, v1::PROBE_KIND_KPROBE_MULTI_RETURN, {})
                  .basis()
                  .confidence(),
              1.0 - 6 * 0.1, 1e-12);
  // The L3's size known: 0.1 back.
  s.mutable_cpus()->set_l3_cache_bytes(117964800);
  EXPECT_NEAR(PredictFgraphAttach(s, v1::PROBE_KIND_KPROBE_MULTI_RETURN, {})
                  .basis()
                  .confidence(),
              1.0 - 5 * 0.1, 1e-12);
}

// Vendor kernels: Debian/Ubuntu releases are asked about their upstream
// version; RHEL's backports make the mainline version meaningless.
TEST(FgraphAttachTest, VendorReleases) {
  v1::HostSnapshot s = testing::FgraphAttachHost(
      "5.14.0-427.13.1.el9_4.x86_64", v1::PREEMPT_MODE_VOLUNTARY, 1000);
  s.mutable_fgraph()->set_active(true);
  // kretprobe: no walk; the release counted as unknown: 1 - 0.3.
  EXPECT_NEAR(
      PredictFgraphAttach(s, v1::PROBE_KIND_KRETPROBE, {}).basis().confidence(),
      1.0 - 0.3, 1e-12);
  // An operator's table speaks for the vendor kernel.
  ModelOptions options;
  options.features = &FeatureTable::Builtin();
  absl::StatusOr<FeatureTable> vendor =
      FeatureTable::WithOverride("features: {}\n");
  ASSERT_TRUE(vendor.ok());
  options.features = &*vendor;
  EXPECT_DOUBLE_EQ(PredictFgraphAttach(s, v1::PROBE_KIND_KRETPROBE, options)
                       .basis()
                       .confidence(),
                   1.0);
  // Debian 6.1.0-28 built from 6.1.119: its rows are 6.1.119's.
  s = testing::FgraphAttachHost("6.1.0-28-amd64", v1::PREEMPT_MODE_VOLUNTARY,
                                1000);
  s.mutable_kernel()->set_upstream_version("6.1.119");
  s.mutable_fgraph()->set_active(true);
  EXPECT_DOUBLE_EQ(
      PredictFgraphAttach(s, v1::PROBE_KIND_KRETPROBE, {}).basis().confidence(),
      1.0);
}

}  // namespace
}  // namespace tracehealth
