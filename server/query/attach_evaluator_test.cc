#include "server/query/attach_evaluator.h"

#include <string>
#include <vector>

#include "common/kernel/feature_table_override.h"
#include "common/models/evaluate.h"
#include "gtest/gtest.h"
#include "server/query/what_if.h"
#include "tools/loadgen/sample_report.h"

namespace tracehealth::server {
namespace {

// Rows an operator might override: the 1024 batch backported to 6.12.20,
// entry-only fprobes off fgraph from 6.16.
constexpr char kVendorRows[] =
    "features:\n"
    "  retstack_batch_1024:\n"
    "    since: \"7.2\"\n"
    "    backports: [\"6.12.20\"]\n"
    "  fprobe_entry_only_off_fgraph:\n"
    "    since: \"6.16\"\n";

// Reports of varied hosts: the synthetic fleet's kinds, preemption modes and
// kernels, plus every input the attach model reads missing or odd once.
std::vector<v1::HostReport> Reports() {
  std::vector<v1::HostReport> out;
  for (int i = 0; i < 64; ++i) {
    out.push_back(SampleReport(FleetHost(i), 1, absl::FromUnixSeconds(1)));
  }
  using Edit = void (*)(v1::HostSnapshot*);
  const Edit edits[] = {
      [](v1::HostSnapshot* s) { s->mutable_kernel()->clear_release(); },
      [](v1::HostSnapshot* s) { s->mutable_kernel()->set_release("garbage"); },
      [](v1::HostSnapshot* s) { s->mutable_threads()->clear_total(); },
      [](v1::HostSnapshot* s) { s->mutable_fgraph()->clear_active(); },
      [](v1::HostSnapshot* s) {
        s->mutable_fgraph()->clear_null_threads_bound();
      },
      [](v1::HostSnapshot* s) {
        s->mutable_fgraph()->set_null_threads_bound(1000);
      },
      [](v1::HostSnapshot* s) {
        s->mutable_fgraph()->clear_available_filter_functions();
      },
      [](v1::HostSnapshot* s) { s->clear_thresholds(); },
      [](v1::HostSnapshot* s) {
        s->mutable_thresholds()->set_watchdog_thresh_seconds(0);
        s->mutable_thresholds()->set_softlockup_panic(true);
        s->mutable_thresholds()->set_panic_on_rcu_stall(true);
        s->mutable_thresholds()->set_rcu_cpu_stall_timeout_seconds(60);
      },
      [](v1::HostSnapshot* s) {
        s->mutable_kernel()->set_preempt_mode(v1::PREEMPT_MODE_UNKNOWN);
      },
      [](v1::HostSnapshot* s) {
        s->mutable_kernel()->set_config_function_graph_tracer(false);
      },
      [](v1::HostSnapshot* s) {
        s->mutable_kernel()->set_config_fprobe(false);
      },
      [](v1::HostSnapshot* s) {
        s->mutable_kernel()->clear_config_fprobe();
        s->mutable_kernel()->clear_config_function_graph_tracer();
      },
      [](v1::HostSnapshot* s) { s->mutable_kernel()->set_release("6.18.35"); },
  };
  for (const Edit& edit : edits) {
    for (int i : {1, 4, 6}) {
      v1::HostReport r =
          SampleReport(FleetHost(i), 1, absl::FromUnixSeconds(1));
      edit(r.mutable_snapshot());
      out.push_back(std::move(r));
    }
  }
  absl::StatusOr<v1::FeatureTableOverride> o =
      FeatureTableOverrideOf(kVendorRows);
  EXPECT_TRUE(o.ok());
  for (int i : {0, 1, 2, 3}) {  // 6.12.20, 6.16.3, 6.18.40, 6.19.2
    v1::HostReport r = SampleReport(FleetHost(i), 1, absl::FromUnixSeconds(1));
    *r.mutable_feature_table_override() = *o;
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<v1::WhatIf> WhatIfs() {
  std::vector<v1::WhatIf> out(1);  // none
  out.emplace_back().set_threads(400000);
  out.emplace_back().set_batch(1024);
  v1::WhatIf both;
  both.set_threads(250000);
  both.set_null_threads(120000);
  both.set_preempt_mode(v1::PREEMPT_MODE_NONE);
  out.push_back(both);
  out.emplace_back().set_kernel_release("6.19.1");
  out.emplace_back().set_kernel_release("6.12.20");
  out.emplace_back().set_fgraph_active(false);
  out.emplace_back().set_fgraph_active(true);
  out.emplace_back().set_c_visit_seconds(120e-9);
  out.emplace_back().set_latency_budget_seconds(2);
  out.emplace_back().set_preempt_mode(v1::PREEMPT_MODE_LAZY);
  return out;
}

// What the query path did before records: PredictAttach on a copy of the
// stored snapshot with the what-if applied, the host's table in the options.
v1::AttachPrediction Expected(const v1::HostReport& r, v1::ProbeKind kind,
                              const v1::WhatIf& w,
                              std::optional<double> budget) {
  std::optional<FeatureTable> table;
  ModelOptions options;
  if (r.has_feature_table_override()) {
    table.emplace(*FeatureTableFromOverride(r.feature_table_override()));
    options.features = &*table;
  }
  v1::HostSnapshot s = r.snapshot();
  ApplyWhatIf(w, s, options);
  if (budget) options.latency_budget_seconds = budget;
  return PredictAttach(s, kind, options);
}

TEST(AttachEvaluatorTest, SameNumbersAsTheModelsOnTheWholeSnapshot) {
  const std::vector<v1::HostReport> reports = Reports();
  FeatureTableCache tables;
  // Hosts with the same kernel and CPU share one identity, as in the index:
  // one group of the evaluator serves them all, and must not carry one
  // host's numbers over to the next.
  KernelIdentityCache identities;
  std::vector<HostRecord> records;
  for (const v1::HostReport& r : reports)
    records.push_back(MakeHostRecord(r, tables, &identities));
  EXPECT_EQ(records[0].inputs.identity.get(), records[4].inputs.identity.get());
  EXPECT_NE(records[0].inputs.identity.get(), records[1].inputs.identity.get());
  int compared = 0;
  for (const v1::WhatIf& w : WhatIfs()) {
    ASSERT_TRUE(CheckWhatIf(w).ok());
    for (std::optional<double> budget :
         {std::optional<double>(), std::optional<double>(1.5)}) {
      if (budget && w.has_latency_budget_seconds()) continue;
      for (int k = v1::PROBE_KIND_FUNCTION_GRAPH_TRACER;
           k <= v1::PROBE_KIND_FENTRY_FEXIT; ++k) {
        const auto kind = static_cast<v1::ProbeKind>(k);
        // One evaluator for every host, as a fleet query uses it: its caches
        // must not carry one host's answer over to the next.
        AttachEvaluator eval(kind, HasOverrides(w) ? &w : nullptr, budget);
        for (size_t i = 0; i < reports.size(); ++i) {
          const v1::AttachPrediction want =
              Expected(reports[i], kind, w, budget);
          const v1::AttachPrediction& got = eval.Predict(records[i]);
          ASSERT_EQ(got.SerializeAsString(), want.SerializeAsString())
              << "host " << i << " kind " << k << " what-if "
              << w.ShortDebugString() << "\n got " << got.ShortDebugString()
              << "\nwant " << want.ShortDebugString();
          ++compared;
        }
      }
    }
  }
  // 11 what-ifs, 10 with a budget too, 10 kinds, 110 hosts.
  EXPECT_EQ(compared, (11 + 10) * 10 * 110);
}

TEST(AttachEvaluatorTest, WithoutWhatIfTheStoredPredictionComesBack) {
  // An agent's report carries PredictAll's numbers: the evaluator gives the
  // same for every kind.
  FeatureTableCache tables;
  for (int i = 0; i < 16; ++i) {
    const v1::HostReport r =
        SampleReport(FleetHost(i), 1, absl::FromUnixSeconds(1));
    const HostRecord record = MakeHostRecord(r, tables);
    for (const v1::AttachPrediction& stored : r.predictions().attach()) {
      AttachEvaluator eval(stored.probe_kind(), nullptr);
      EXPECT_EQ(eval.Predict(record).SerializeAsString(),
                stored.SerializeAsString())
          << i;
    }
  }
}

}  // namespace
}  // namespace tracehealth::server
