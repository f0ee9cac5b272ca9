// Fleet-wide predictions come from each host's compact record
// (server/index/host_record.h), per-host ones from its whole report. On
// every fixture host, as the agent collects it from the real kernel files,
// the two must give the same numbers for every probe kind, with and
// without what-ifs: a model input the record does not carry (kernel
// version, architecture, upstream version, PREEMPT_DYNAMIC, PREEMPT_RCU,
// page size, the ftrace filter, the CPU model, a hypervisor) shows up here.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "agent/collect/collector.h"
#include "common/models/evaluate.h"
#include "common/procfs/host_fs.h"
#include "gtest/gtest.h"
#include "server/index/host_index.h"
#include "server/index/host_record.h"
#include "server/ingest/report_row.h"
#include "server/query/attach_evaluator.h"
#include "server/query/what_if.h"
#include "server/report/report_head.h"
#include "server/storage/sqlite/sqlite_storage.h"
#include "tests/agent/fixture_util.h"
#include "tests/util/subprocess.h"

namespace tracehealth::server {
namespace {

const absl::Time kNow = absl::FromUnixSeconds(1796000000);

const char* const kFixtureHosts[] = {
    "fgraph-active-6.19",
    "kasan-6.12-256cpu",
    "kprobe-multi-6.14",
    "no-tracefs",
    "preempt-none-6.16-240k",
    "preempt-none-dynamic-6.1-200k",
    "preempt-voluntary-dynamic-6.1-128k",
};

// The report the agent would send: the snapshot and PredictAll's numbers.
v1::HostReport ReportOf(const std::string& name) {
  HostFs fs(testing::FixtureRoot(name));
  agent::Collector c(&fs, agent::CollectorOptions{}, [] { return kNow; });
  v1::HostReport r;
  r.set_host_id(name);
  r.set_seq(1);
  r.set_model_version(kModelVersion);
  *r.mutable_snapshot() = c.Collect();
  *r.mutable_predictions() = PredictAll(r.snapshot());
  return r;
}

std::vector<v1::WhatIf> WhatIfs() {
  std::vector<v1::WhatIf> out(1);  // none
  out.emplace_back().set_threads(300000);
  out.emplace_back().set_preempt_mode(v1::PREEMPT_MODE_NONE);
  out.emplace_back().set_preempt_mode(v1::PREEMPT_MODE_FULL);
  out.emplace_back().set_kernel_release("6.19.1");
  out.emplace_back().set_kernel_release("6.1.0");
  out.emplace_back().set_fgraph_active(true);
  out.emplace_back().set_fgraph_active(false);
  out.emplace_back().set_batch(1024);
  out.emplace_back().set_latency_budget_seconds(2);
  return out;
}

// Compares every prediction `record` gives with the report's (stored, and
// re-run with each what-if on the whole snapshot); returns how many.
int CompareWithReport(const std::string& name, const v1::HostReport& report,
                      const HostRecord& record) {
  int compared = 0;
  // Without a what-if: the stored prediction of every kind.
  for (const v1::AttachPrediction& stored : report.predictions().attach()) {
    AttachEvaluator eval(stored.probe_kind(), nullptr);
    EXPECT_EQ(eval.Predict(record).SerializeAsString(),
              stored.SerializeAsString())
        << name << " kind " << stored.probe_kind() << "\n got "
        << eval.Predict(record).ShortDebugString() << "\nwant "
        << stored.ShortDebugString();
    ++compared;
  }
  // With one: the model re-run on the whole snapshot, changed the same way.
  for (const v1::WhatIf& w : WhatIfs()) {
    EXPECT_TRUE(CheckWhatIf(w).ok());
    for (int k = v1::PROBE_KIND_FUNCTION_GRAPH_TRACER;
         k <= v1::PROBE_KIND_FENTRY_FEXIT; ++k) {
      const auto kind = static_cast<v1::ProbeKind>(k);
      // A plan's budget (1.5 s) when the what-if sets none.
      const std::optional<double> budget = w.has_latency_budget_seconds()
                                               ? std::nullopt
                                               : std::optional<double>(1.5);
      AttachEvaluator eval(kind, HasOverrides(w) ? &w : nullptr, budget);
      v1::HostSnapshot s = report.snapshot();
      ModelOptions options;
      ApplyWhatIf(w, s, options);
      if (budget) options.latency_budget_seconds = budget;
      const v1::AttachPrediction want = PredictAttach(s, kind, options);
      const v1::AttachPrediction& got = eval.Predict(record);
      EXPECT_EQ(got.SerializeAsString(), want.SerializeAsString())
          << name << " kind " << k << " what-if " << w.ShortDebugString()
          << "\n got " << got.ShortDebugString() << "\nwant "
          << want.ShortDebugString();
      ++compared;
    }
  }
  return compared;
}

TEST(RecordPredictionsTest, FixtureHostsRecordsGiveTheReportsNumbers) {
  FeatureTableCache tables;
  int compared = 0;
  for (const char* name : kFixtureHosts) {
    const v1::HostReport report = ReportOf(name);
    compared += CompareWithReport(name, report, MakeHostRecord(report, tables));
  }
  // 7 hosts: 10 stored kinds each, and 10 what-ifs x 10 kinds.
  EXPECT_EQ(compared, 7 * (10 + 10 * 10));
}

// After a restart the index holds the records stored with the reports
// (host_record_codec.h), not records made from the reports: they must give
// the same numbers, and the same stored values queries read.
TEST(RecordPredictionsTest, RestartedIndexGivesTheReportsNumbers) {
  const std::string db = testing::NewTempDir("record_predictions") + "/t.db";
  std::vector<v1::HostReport> reports;
  {
    absl::StatusOr<std::unique_ptr<SqliteStorage>> store =
        SqliteStorage::Open(db);
    ASSERT_TRUE(store.ok()) << store.status();
    std::vector<ReportRow> rows;
    for (const char* name : kFixtureHosts) {
      reports.push_back(ReportOf(name));
      const std::string wire = reports.back().SerializeAsString();
      absl::StatusOr<ReportHead> head = DecodeReportHead(wire);
      ASSERT_TRUE(head.ok()) << head.status();
      rows.push_back(MakeReportRow(*head, wire, kNow));
      ASSERT_FALSE(rows.back().record.empty()) << name;
    }
    ASSERT_TRUE((*store)->WriteBatch(rows).ok());
  }
  absl::StatusOr<std::unique_ptr<SqliteStorage>> store =
      SqliteStorage::Open(db);
  ASSERT_TRUE(store.ok()) << store.status();
  HostIndex index;
  HostIndex::LoadStats stats;
  ASSERT_TRUE(index.LoadFrom(**store, &stats).ok());
  EXPECT_EQ(stats.from_records, 7u);
  EXPECT_EQ(stats.from_reports, 0u);
  FeatureTableCache tables;
  int compared = 0;
  for (const v1::HostReport& report : reports) {
    const std::string& name = report.host_id();
    std::optional<HostEntry> e = index.Get(name);
    ASSERT_TRUE(e.has_value()) << name;
    compared += CompareWithReport(name, report, e->record);
    // What fleet queries and metrics read besides the model.
    const HostRecord made = MakeHostRecord(report, tables);
    EXPECT_EQ(e->record.worst_risk, made.worst_risk) << name;
    EXPECT_EQ(e->record.worst_margin, made.worst_margin) << name;
    EXPECT_EQ(e->record.pool_budget_ratio, made.pool_budget_ratio) << name;
    EXPECT_EQ(e->record.seconds_to_exhaustion, made.seconds_to_exhaustion)
        << name;
    EXPECT_EQ(e->record.vmap_applies, made.vmap_applies) << name;
    EXPECT_EQ(e->record.purge_seconds, made.purge_seconds) << name;
    EXPECT_EQ(e->record.purge_lockup_margin, made.purge_lockup_margin) << name;
    EXPECT_EQ(e->record.current_model, made.current_model) << name;
    EXPECT_EQ(e->record.labels, made.labels) << name;
    EXPECT_EQ(*e->record.inputs.identity, *made.inputs.identity) << name;
    EXPECT_EQ(e->record.inputs.bits, made.inputs.bits) << name;
  }
  EXPECT_EQ(compared, 7 * (10 + 10 * 10));
}

// The two dynamic 6.1 hosts differ from a static build only in inputs the
// record had to learn to carry: the fixture says PREEMPT_DYNAMIC (the
// preemption build, hence c_visit and PREEMPT_RCU) and the CPU model.
TEST(RecordPredictionsTest, DynamicHostsCarryTheirBuildAndCpu) {
  FeatureTableCache tables;
  for (const char* name : {"preempt-voluntary-dynamic-6.1-128k",
                           "preempt-none-dynamic-6.1-200k"}) {
    const v1::HostReport report = ReportOf(name);
    const HostRecord record = MakeHostRecord(report, tables);
    const v1::KernelInfo& k = report.snapshot().kernel();
    ASSERT_TRUE(k.has_preempt_dynamic()) << name;
    EXPECT_TRUE(record.inputs.has(AttachModelInputs::kHasPreemptDynamic));
    EXPECT_EQ(record.inputs.has(AttachModelInputs::kPreemptDynamic),
              k.preempt_dynamic());
    EXPECT_EQ(record.inputs.identity->version, k.version()) << name;
    EXPECT_EQ(record.inputs.identity->arch, k.arch()) << name;
    EXPECT_EQ(record.inputs.identity->cpu_model,
              report.snapshot().cpus().model_name());
  }
}

}  // namespace
}  // namespace tracehealth::server
