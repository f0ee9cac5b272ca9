#include "server/index/host_record_codec.h"

#include <utility>

#include "common/kernel/feature_table_override.h"
#include "common/models/evaluate.h"
#include "gtest/gtest.h"
#include "tools/loadgen/sample_report.h"

namespace tracehealth::server {
namespace {

// Every field of a record, compared one by one.
void ExpectSameRecord(const HostRecord& got, const HostRecord& want) {
  EXPECT_EQ(*got.inputs.identity, *want.inputs.identity);
  EXPECT_EQ(got.inputs.threads_total, want.inputs.threads_total);
  EXPECT_EQ(got.inputs.null_threads_bound, want.inputs.null_threads_bound);
  EXPECT_EQ(got.inputs.available_filter_functions,
            want.inputs.available_filter_functions);
  EXPECT_EQ(got.inputs.ftrace_filter_functions,
            want.inputs.ftrace_filter_functions);
  EXPECT_EQ(got.inputs.page_size, want.inputs.page_size);
  EXPECT_EQ(got.inputs.watchdog_thresh_seconds,
            want.inputs.watchdog_thresh_seconds);
  EXPECT_EQ(got.inputs.rcu_cpu_stall_timeout_seconds,
            want.inputs.rcu_cpu_stall_timeout_seconds);
  EXPECT_EQ(got.inputs.hung_task_timeout_seconds,
            want.inputs.hung_task_timeout_seconds);
  EXPECT_EQ(got.inputs.online_cpus, want.inputs.online_cpus);
  EXPECT_EQ(got.inputs.possible_cpus, want.inputs.possible_cpus);
  EXPECT_EQ(got.inputs.l3_cache_bytes, want.inputs.l3_cache_bytes);
  EXPECT_EQ(got.inputs.preempt_mode, want.inputs.preempt_mode);
  EXPECT_EQ(got.inputs.bits, want.inputs.bits);
  EXPECT_EQ(got.features == nullptr, want.features == nullptr);
  EXPECT_EQ(got.labels, want.labels);
  EXPECT_EQ(got.current_model, want.current_model);
  EXPECT_EQ(got.has_observed_at, want.has_observed_at);
  EXPECT_EQ(got.observed_at_seconds, want.observed_at_seconds);
  EXPECT_EQ(got.observed_at_nanos, want.observed_at_nanos);
  EXPECT_EQ(got.seq, want.seq);
  EXPECT_EQ(got.interval_seconds, want.interval_seconds);
  EXPECT_EQ(got.spool_dropped_total, want.spool_dropped_total);
  EXPECT_EQ(got.worst_risk, want.worst_risk);
  EXPECT_EQ(got.worst_margin, want.worst_margin);
  for (int i = 0; i < kProbeKinds; ++i) {
    SCOPED_TRACE(i);
    const StoredAttach& g = got.attach[i];
    const StoredAttach& w = want.attach[i];
    EXPECT_EQ(g.present, w.present);
    EXPECT_EQ(g.latency_seconds, w.latency_seconds);
    EXPECT_EQ(g.margins, w.margins);
    EXPECT_EQ(g.applies, w.applies);
    EXPECT_EQ(g.risk, w.risk);
  }
  EXPECT_EQ(got.pool_budget_ratio, want.pool_budget_ratio);
  EXPECT_EQ(got.seconds_to_exhaustion, want.seconds_to_exhaustion);
  EXPECT_EQ(got.stack_depot_risk, want.stack_depot_risk);
  EXPECT_EQ(got.vmap_applies, want.vmap_applies);
  EXPECT_EQ(got.purge_seconds, want.purge_seconds);
  EXPECT_EQ(got.purge_lockup_margin, want.purge_lockup_margin);
  EXPECT_EQ(got.vmap_risk, want.vmap_risk);
  ASSERT_EQ(got.calibration == nullptr, want.calibration == nullptr);
  if (got.calibration != nullptr) {
    EXPECT_EQ(got.calibration->c_visit_seconds,
              want.calibration->c_visit_seconds);
    EXPECT_EQ(got.calibration->fixed_seconds, want.calibration->fixed_seconds);
    EXPECT_EQ(got.calibration->c_pass_seconds,
              want.calibration->c_pass_seconds);
    EXPECT_EQ(got.calibration->source, want.calibration->source);
    ASSERT_EQ(got.calibration->visit_levels.size(),
              want.calibration->visit_levels.size());
    for (size_t i = 0; i < got.calibration->visit_levels.size(); ++i) {
      EXPECT_EQ(got.calibration->visit_levels[i].from_tasks,
                want.calibration->visit_levels[i].from_tasks);
      EXPECT_EQ(got.calibration->visit_levels[i].factor,
                want.calibration->visit_levels[i].factor);
    }
  }
}

// A report with every field a record keeps set to a value of its own.
v1::HostReport FullReport() {
  v1::HostReport r = SampleReport(FleetHost(3), 42, absl::FromUnixSeconds(1));
  r.mutable_observed_at()->set_seconds(1700000000);
  r.mutable_observed_at()->set_nanos(5);
  r.set_interval_seconds(15);
  r.mutable_health()->set_spool_dropped_total(7);
  (*r.mutable_labels())["zone"] = "z2";
  v1::Calibration* c = r.mutable_calibration();
  c->set_c_visit_seconds(9.1e-8);
  c->set_fixed_seconds(0.004);
  c->set_c_pass_seconds(3e-4);
  c->set_c_pass_fitted(true);
  c->set_class_canaries(3);
  c->set_hardware_class("Xeon/6.1");
  for (auto [tasks, ns] :
       {std::pair<uint64_t, double>{1024, 100}, {4096, 100}, {16384, 160}}) {
    v1::MemoryWalkPoint* w = c->add_memory_walk();
    w->set_tasks(tasks);
    w->set_ns_per_task(ns);
  }
  absl::StatusOr<v1::FeatureTableOverride> o = FeatureTableOverrideOf(
      "features:\n  retstack_batch_1024:\n    since: \"6.16\"\n");
  EXPECT_TRUE(o.ok());
  *r.mutable_feature_table_override() = *o;
  v1::Predictions* p = r.mutable_predictions();
  p->clear_attach();
  p->set_worst_risk(v1::RISK_STALL);
  v1::AttachPrediction* fg = p->add_attach();
  fg->set_probe_kind(v1::PROBE_KIND_FUNCTION_GRAPH_TRACER);
  fg->set_latency_seconds(221.9);
  fg->set_risk(v1::RISK_STALL);
  AddCheck(fg->mutable_checks(), v1::ThresholdCheck::KIND_SOFT_LOCKUP, 11.09,
           true);
  AddCheck(fg->mutable_checks(), v1::ThresholdCheck::KIND_LATENCY, 2.5, true);
  v1::AttachPrediction* kr = p->add_attach();
  kr->set_probe_kind(v1::PROBE_KIND_KRETPROBE);
  kr->set_latency_seconds(0.125);
  kr->set_risk(v1::RISK_NONE);
  AddCheck(kr->mutable_checks(), v1::ThresholdCheck::KIND_RCU_STALL, 0.0625,
           true);
  p->mutable_stack_depot()->set_budget_ratio(0.25);
  p->mutable_stack_depot()->set_seconds_to_exhaustion(3600);
  p->mutable_stack_depot()->set_risk(v1::RISK_WARNING);
  p->mutable_vmap_purge()->set_applies(true);
  p->mutable_vmap_purge()->set_purge_seconds(23.87);
  p->mutable_vmap_purge()->set_risk(v1::RISK_STALL);
  AddCheck(p->mutable_vmap_purge()->mutable_checks(),
           v1::ThresholdCheck::KIND_SOFT_LOCKUP, 1.19, true);
  return r;
}

TEST(HostRecordCodecTest, DecodedRecordHasTheReportsValues) {
  const v1::HostReport r = FullReport();
  FeatureTableCache tables;
  KernelIdentityCache identities;
  absl::StatusOr<HostRecord> h =
      DecodeHostRecord(EncodeHostRecord(r), tables, &identities);
  ASSERT_TRUE(h.ok()) << h.status();
  // The values set above, read back.
  EXPECT_EQ(h->seq, 42u);
  EXPECT_EQ(h->observed_at_seconds, 1700000000);
  EXPECT_EQ(h->observed_at_nanos, 5);
  EXPECT_EQ(h->interval_seconds, 15);
  EXPECT_EQ(h->spool_dropped_total, 7u);
  EXPECT_EQ(h->labels.Find("zone"), absl::string_view("z2"));
  EXPECT_EQ(h->labels.Find("role"), absl::string_view(FleetHost(3).role));
  EXPECT_TRUE(h->current_model);
  ASSERT_NE(h->features, nullptr);
  EXPECT_TRUE(
      h->features
          ->Has(feature::kRetstackBatch1024, *ParseKernelRelease("6.16.3"))
          .present);
  ASSERT_NE(h->calibration, nullptr);
  EXPECT_EQ(h->calibration->c_visit_seconds, 9.1e-8);
  EXPECT_EQ(h->calibration->fixed_seconds, 0.004);
  EXPECT_EQ(h->calibration->c_pass_seconds, 3e-4);
  EXPECT_EQ(h->calibration->source, "3 canaries of class Xeon/6.1");
  // The memory walk's levels: from sqrt(1024 * 4096) at 1, from
  // sqrt(4096 * 16384) at 1.6.
  ASSERT_EQ(h->calibration->visit_levels.size(), 2u);
  EXPECT_EQ(h->calibration->visit_levels[0].from_tasks, 2048);
  EXPECT_EQ(h->calibration->visit_levels[0].factor, 1);
  EXPECT_EQ(h->calibration->visit_levels[1].from_tasks, 8192);
  EXPECT_EQ(h->calibration->visit_levels[1].factor, 1.6);
  EXPECT_EQ(h->inputs.release(), r.snapshot().kernel().release());
  EXPECT_EQ(h->threads(), r.snapshot().threads().total());
  EXPECT_EQ(h->worst_risk, v1::RISK_STALL);
  EXPECT_EQ(h->worst_margin, 11.09);  // the largest of 11.09, 2.5, ...
  const StoredAttach* fg = h->Attach(v1::PROBE_KIND_FUNCTION_GRAPH_TRACER);
  ASSERT_NE(fg, nullptr);
  EXPECT_EQ(fg->latency_seconds, 221.9);
  EXPECT_EQ(fg->margin(kSoftLockup), 11.09);
  EXPECT_FALSE(fg->margin(kRcuStall).has_value());
  EXPECT_EQ(fg->margin(kLatencyBudget), 2.5);
  const StoredAttach* kr = h->Attach(v1::PROBE_KIND_KRETPROBE);
  ASSERT_NE(kr, nullptr);
  EXPECT_EQ(kr->latency_seconds, 0.125);
  EXPECT_EQ(kr->risk, v1::RISK_NONE);
  EXPECT_EQ(kr->margin(kRcuStall), 0.0625);
  EXPECT_EQ(h->Attach(v1::PROBE_KIND_FPROBE_EVENT), nullptr);
  EXPECT_EQ(h->pool_budget_ratio, 0.25);
  EXPECT_EQ(h->seconds_to_exhaustion, 3600);
  EXPECT_EQ(h->stack_depot_risk, v1::RISK_WARNING);
  EXPECT_TRUE(h->vmap_applies);
  EXPECT_EQ(h->purge_seconds, 23.87);
  EXPECT_EQ(h->purge_lockup_margin, 1.19);
  EXPECT_EQ(h->vmap_risk, v1::RISK_STALL);
  // And every field as MakeHostRecord has it.
  ExpectSameRecord(*h, MakeHostRecord(r, tables, &identities));
}

TEST(HostRecordCodecTest, EveryFleetHostRoundTrips) {
  FeatureTableCache tables;
  KernelIdentityCache identities;
  for (int i = 0; i < 24; ++i) {
    SCOPED_TRACE(i);
    v1::HostReport r =
        SampleReport(FleetHost(i), 7 + i, absl::FromUnixSeconds(1000 + i));
    if (i % 3 == 0) r.clear_observed_at();
    if (i % 4 == 0) r.set_model_version("0.9.0");  // current_model false
    if (i % 5 == 0) r.mutable_snapshot()->mutable_kernel()->clear_release();
    // The hung-task inputs: unread, off, and 120 s with and without panic.
    if (i % 4 != 1) {
      v1::Thresholds* t = r.mutable_snapshot()->mutable_thresholds();
      t->set_hung_task_timeout_seconds(i % 4 == 0 ? 0 : 120);
      t->set_hung_task_panic(i % 4 == 3);
    }
    // The L3's size: unread on every other host, else i MiB.
    if (i % 2 == 1)
      r.mutable_snapshot()->mutable_cpus()->set_l3_cache_bytes(i << 20);
    else
      r.mutable_snapshot()->mutable_cpus()->clear_l3_cache_bytes();
    absl::StatusOr<HostRecord> h =
        DecodeHostRecord(EncodeHostRecord(r), tables, &identities);
    ASSERT_TRUE(h.ok()) << h.status();
    const HostRecord want = MakeHostRecord(r, tables, &identities);
    ExpectSameRecord(*h, want);
    if (i % 4 != 1) {
      EXPECT_EQ(h->inputs.hung_task_timeout_seconds, i % 4 == 0 ? 0u : 120u);
      EXPECT_TRUE(h->inputs.has(AttachModelInputs::kHasHungTaskTimeout));
      EXPECT_EQ(h->inputs.has(AttachModelInputs::kHungTaskPanic), i % 4 == 3);
    } else {
      EXPECT_FALSE(h->inputs.has(AttachModelInputs::kHasHungTaskTimeout));
    }
    EXPECT_EQ(h->inputs.l3_cache_bytes, i % 2 == 1 ? uint32_t(i) << 20 : 0u);
    // Interned: the same identity object as the report's record.
    EXPECT_EQ(h->inputs.identity.get(), want.inputs.identity.get());
  }
}

TEST(HostRecordCodecTest, HostWithoutInputsKeepsTheEmptyIdentity) {
  v1::HostReport r;
  r.set_seq(1);
  FeatureTableCache tables;
  absl::StatusOr<HostRecord> h =
      DecodeHostRecord(EncodeHostRecord(r), tables, nullptr);
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->inputs.identity.get(), KernelIdentity::Empty().get());
  EXPECT_FALSE(h->has_release());
  EXPECT_FALSE(h->threads().has_value());
  EXPECT_EQ(h->features, nullptr);
  EXPECT_EQ(h->calibration, nullptr);
  EXPECT_FALSE(h->worst_margin.has_value());
  EXPECT_EQ(h->Attach(v1::PROBE_KIND_FUNCTION_GRAPH_TRACER), nullptr);
}

TEST(HostRecordCodecTest, RecordOfAnotherVersionIsRefused) {
  FeatureTableCache tables;
  const v1::HostReport r = FullReport();
  v1::StoredHostRecord s = ToStoredRecord(r);
  EXPECT_EQ(s.format_version(), kHostRecordFormatVersion);
  EXPECT_EQ(s.made_under_model_version(), kModelVersion);
  ASSERT_TRUE(DecodeHostRecord(s.SerializeAsString(), tables, nullptr).ok());
  s.set_format_version(kHostRecordFormatVersion + 1);
  absl::StatusOr<HostRecord> h =
      DecodeHostRecord(s.SerializeAsString(), tables, nullptr);
  EXPECT_EQ(h.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(h.status().message().find("format 2"), std::string::npos)
      << h.status();
  s = ToStoredRecord(r);
  s.set_made_under_model_version("0.9.0");
  h = DecodeHostRecord(s.SerializeAsString(), tables, nullptr);
  EXPECT_EQ(h.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(h.status().message().find("\"0.9.0\""), std::string::npos)
      << h.status();
}

TEST(HostRecordCodecTest, CorruptRecordIsDataLoss) {
  FeatureTableCache tables;
  // A length-delimited field (2 = made_under_model_version) claiming 100
  // bytes with 1 left.
  EXPECT_EQ(DecodeHostRecord(std::string("\x12\x64x", 3), tables, nullptr)
                .status()
                .code(),
            absl::StatusCode::kDataLoss);
  // Parses, but an attach prediction with 2 margins instead of 3.
  v1::StoredHostRecord s = ToStoredRecord(FullReport());
  s.mutable_attach(0)->mutable_margins()->RemoveLast();
  absl::StatusOr<HostRecord> h =
      DecodeHostRecord(s.SerializeAsString(), tables, nullptr);
  EXPECT_EQ(h.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(h.status().message().find("2 margins"), std::string::npos)
      << h.status();
  // A probe kind out of range.
  s = ToStoredRecord(FullReport());
  s.mutable_attach(0)->set_probe_kind(99);
  EXPECT_EQ(
      DecodeHostRecord(s.SerializeAsString(), tables, nullptr).status().code(),
      absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace tracehealth::server
