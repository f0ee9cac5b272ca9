#include "server/index/host_record.h"

#include <optional>

#include "common/kernel/feature_table_override.h"
#include "common/models/evaluate.h"
#include "common/models/fgraph/fgraph_kernel.h"
#include "gtest/gtest.h"
#include "tools/loadgen/sample_report.h"

namespace tracehealth::server {
namespace {

TEST(HostRecordTest, WorstMarginIsTheLargestApplyingCheckOfAnyPrediction) {
  v1::Predictions p;
  EXPECT_FALSE(WorstMargin(p).has_value());
  AddCheck(p.add_attach()->mutable_checks(),
           v1::ThresholdCheck::KIND_SOFT_LOCKUP, 0.5, true);
  AddCheck(p.add_attach()->mutable_checks(),
           v1::ThresholdCheck::KIND_SOFT_LOCKUP, 9.0, false);  // moot
  EXPECT_EQ(WorstMargin(p), 0.5);
  AddCheck(p.mutable_stack_depot()->mutable_checks(),
           v1::ThresholdCheck::KIND_POOL_BUDGET, 0.75, true);
  EXPECT_EQ(WorstMargin(p), 0.75);
  AddCheck(p.mutable_vmap_purge()->mutable_checks(),
           v1::ThresholdCheck::KIND_SOFT_LOCKUP, 1.25, true);
  EXPECT_EQ(WorstMargin(p), 1.25);
}

TEST(HostRecordTest, KeepsWhatQueriesAndMetricsRead) {
  v1::HostReport r;
  r.set_host_id("db-1");
  r.set_seq(42);
  r.mutable_observed_at()->set_seconds(1700000000);
  r.mutable_observed_at()->set_nanos(5);
  r.set_model_version(kModelVersion);
  r.set_interval_seconds(15);
  r.mutable_health()->set_spool_dropped_total(7);
  (*r.mutable_labels())["role"] = "db";
  r.mutable_snapshot()->mutable_kernel()->set_release("6.16.3");
  r.mutable_snapshot()->mutable_threads()->set_total(400000);
  v1::Predictions* p = r.mutable_predictions();
  p->set_worst_risk(v1::RISK_STALL);
  v1::AttachPrediction* fg = p->add_attach();
  fg->set_probe_kind(v1::PROBE_KIND_FUNCTION_GRAPH_TRACER);
  fg->set_latency_seconds(221.9);
  fg->set_risk(v1::RISK_STALL);
  AddCheck(fg->mutable_checks(), v1::ThresholdCheck::KIND_SOFT_LOCKUP, 11.09,
           true);
  AddCheck(fg->mutable_checks(), v1::ThresholdCheck::KIND_RCU_STALL, 10.5,
           false);
  // A second function_graph prediction: the first counts.
  p->add_attach()->set_probe_kind(v1::PROBE_KIND_FUNCTION_GRAPH_TRACER);
  p->mutable_stack_depot()->set_budget_ratio(0.25);
  p->mutable_vmap_purge()->set_applies(true);
  p->mutable_vmap_purge()->set_purge_seconds(23.87);
  AddCheck(p->mutable_vmap_purge()->mutable_checks(),
           v1::ThresholdCheck::KIND_SOFT_LOCKUP, 1.19, true);
  FeatureTableCache tables;
  const HostRecord h = MakeHostRecord(r, tables);
  EXPECT_EQ(h.seq, 42u);
  EXPECT_TRUE(h.has_observed_at);
  EXPECT_EQ(h.observed_at_seconds, 1700000000);
  EXPECT_EQ(h.observed_at_nanos, 5);
  EXPECT_TRUE(h.current_model);
  EXPECT_EQ(h.interval_seconds, 15);
  EXPECT_EQ(h.spool_dropped_total, 7u);
  EXPECT_EQ(h.labels.Find("role"), absl::string_view("db"));
  EXPECT_EQ(h.features, nullptr);
  EXPECT_EQ(h.inputs.release(), "6.16.3");
  EXPECT_EQ(h.threads(), 400000u);
  EXPECT_EQ(h.worst_risk, v1::RISK_STALL);
  EXPECT_EQ(h.worst_margin, 11.09);
  const StoredAttach* a = h.Attach(v1::PROBE_KIND_FUNCTION_GRAPH_TRACER);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->latency_seconds, 221.9);
  EXPECT_EQ(a->risk, v1::RISK_STALL);
  EXPECT_EQ(a->margin(kSoftLockup), 11.09);
  EXPECT_FALSE(a->margin(kRcuStall).has_value());  // does not apply
  EXPECT_FALSE(a->margin(kLatencyBudget).has_value());
  EXPECT_EQ(h.Attach(v1::PROBE_KIND_KRETPROBE), nullptr);
  EXPECT_EQ(h.Attach(v1::PROBE_KIND_UNSPECIFIED), nullptr);
  EXPECT_EQ(h.pool_budget_ratio, 0.25);
  EXPECT_FALSE(h.seconds_to_exhaustion.has_value());
  EXPECT_TRUE(h.vmap_applies);
  EXPECT_EQ(h.purge_seconds, 23.87);
  EXPECT_EQ(h.purge_lockup_margin, 1.19);

  r.set_model_version("0.9.0");
  EXPECT_FALSE(MakeHostRecord(r, tables).current_model);
}

TEST(HostRecordTest, InputsRoundTripThroughAScratchSnapshot) {
  v1::HostSnapshot full = SampleSnapshot(FleetHost(7));
  full.mutable_thresholds()->set_hung_task_timeout_seconds(120);
  full.mutable_thresholds()->set_hung_task_panic(true);
  full.mutable_cpus()->set_l3_cache_bytes(32 << 20);
  const AttachModelInputs in = AttachModelInputs::Of(full);
  v1::HostSnapshot scratch;
  in.Fill(&scratch);
  EXPECT_EQ(AttachModelInputs::Of(scratch).bits, in.bits);
  EXPECT_EQ(scratch.kernel().release(), full.kernel().release());
  EXPECT_EQ(scratch.threads().total(), full.threads().total());
  EXPECT_EQ(scratch.fgraph().null_threads_bound(),
            full.fgraph().null_threads_bound());
  EXPECT_EQ(scratch.thresholds().SerializeAsString(),
            full.thresholds().SerializeAsString());
  // What the features and the CPU class are read from.
  EXPECT_EQ(scratch.kernel().version(), full.kernel().version());
  EXPECT_EQ(scratch.kernel().arch(), full.kernel().arch());
  EXPECT_EQ(scratch.cpus().model_name(), full.cpus().model_name());
  // The rethook nodes of a return fprobe before 6.14 go by the CPU counts.
  ASSERT_TRUE(full.cpus().has_online());
  EXPECT_EQ(scratch.cpus().online(), full.cpus().online());
  EXPECT_EQ(scratch.cpus().has_possible(), full.cpus().has_possible());
  EXPECT_EQ(scratch.cpus().possible(), full.cpus().possible());
  // The seed's visit levels go by the L3's size.
  EXPECT_EQ(scratch.cpus().l3_cache_bytes(), 32u << 20);
  // Only the inputs: nothing of the rest of the snapshot.
  EXPECT_FALSE(scratch.kernel().has_cmdline());
  EXPECT_FALSE(scratch.cpus().has_invlpgb());
  // Refilled from a host with fewer inputs, the scratch loses the others.
  v1::HostSnapshot sparse;
  sparse.mutable_kernel()->set_preempt_mode(v1::PREEMPT_MODE_FULL);
  AttachModelInputs::Of(sparse).Fill(&scratch);
  EXPECT_FALSE(scratch.kernel().has_release());
  EXPECT_FALSE(scratch.threads().has_total());
  EXPECT_FALSE(scratch.fgraph().has_active());
  EXPECT_FALSE(scratch.fgraph().has_null_threads_bound());
  EXPECT_FALSE(scratch.thresholds().has_watchdog_thresh_seconds());
  EXPECT_FALSE(scratch.thresholds().has_softlockup_panic());
  EXPECT_FALSE(scratch.thresholds().has_hung_task_timeout_seconds());
  EXPECT_FALSE(scratch.thresholds().has_hung_task_panic());
  EXPECT_FALSE(scratch.kernel().has_version());
  EXPECT_FALSE(scratch.cpus().has_model_name());
  EXPECT_FALSE(scratch.cpus().has_online());
  EXPECT_FALSE(scratch.cpus().has_possible());
  EXPECT_FALSE(scratch.cpus().has_l3_cache_bytes());
  EXPECT_EQ(scratch.kernel().preempt_mode(), v1::PREEMPT_MODE_FULL);
  EXPECT_EQ(AttachModelInputs::Of(scratch).bits, 0u);
}

// IBT goes into the record as the model decides it and comes out deciding
// the same, whichever input decided it.
TEST(HostRecordTest, IbtRoundTripsAsTheModelDecidesIt) {
  struct Case {
    const char* arch;
    const char* cmdline;
    std::optional<bool> config, flag;
    bool on, known;
  };
  const Case cases[] = {
      {"x86_64", "ro", true, true, true, true},
      {"x86_64", "ro ibt=off", true, true, false, true},
      {"x86_64", "ro", true, false, false, true},
      {"x86_64", "ro", false, true, false, true},
      {"x86_64", "ro", true, std::nullopt, false, false},
      {"x86_64", "ro", std::nullopt, true, false, false},
      {"aarch64", "ro", std::nullopt, std::nullopt, false, true},
  };
  for (const Case& c : cases) {
    v1::HostSnapshot full = SampleSnapshot(FleetHost(7));
    full.mutable_kernel()->set_arch(c.arch);
    full.mutable_kernel()->set_cmdline(c.cmdline);
    full.mutable_kernel()->clear_config_x86_kernel_ibt();
    full.mutable_cpus()->clear_ibt();
    if (c.config) full.mutable_kernel()->set_config_x86_kernel_ibt(*c.config);
    if (c.flag) full.mutable_cpus()->set_ibt(*c.flag);
    const KernelIbt want = KernelIbtOf(full);
    EXPECT_EQ(want.on, c.on) << c.cmdline;
    EXPECT_EQ(want.known, c.known) << c.cmdline;
    v1::HostSnapshot scratch;
    AttachModelInputs::Of(full).Fill(&scratch);
    const KernelIbt got = KernelIbtOf(scratch);
    EXPECT_EQ(got.on, want.on) << c.arch << " " << c.cmdline;
    EXPECT_EQ(got.known, want.known) << c.arch << " " << c.cmdline;
  }
}

TEST(HostRecordTest, HostsWithTheSameOverrideShareOneTable) {
  absl::StatusOr<v1::FeatureTableOverride> o = FeatureTableOverrideOf(
      "features:\n  retstack_batch_1024:\n    since: \"6.16\"\n");
  ASSERT_TRUE(o.ok());
  v1::HostReport a = SampleReport(FleetHost(1), 1, absl::FromUnixSeconds(1));
  v1::HostReport b = SampleReport(FleetHost(2), 1, absl::FromUnixSeconds(1));
  *a.mutable_feature_table_override() = *o;
  *b.mutable_feature_table_override() = *o;
  FeatureTableCache tables;
  const HostRecord ra = MakeHostRecord(a, tables);
  const HostRecord rb = MakeHostRecord(b, tables);
  ASSERT_NE(ra.features, nullptr);
  EXPECT_EQ(ra.features.get(), rb.features.get());
  EXPECT_TRUE(
      ra.features
          ->Has(feature::kRetstackBatch1024, *ParseKernelRelease("6.16.3"))
          .present);
  // Rows that do not parse give no table (the built-in one is used).
  a.mutable_feature_table_override()->mutable_rows(0)->set_since("x.y");
  EXPECT_EQ(MakeHostRecord(a, tables).features, nullptr);
}

}  // namespace
}  // namespace tracehealth::server
