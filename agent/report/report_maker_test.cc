#include "agent/report/report_maker.h"

#include "agent/collect/host_fs.h"
#include "agent/testing/test_tree.h"
#include "gtest/gtest.h"

namespace tracehealth::agent {
namespace {

TEST(ReportMakerTest, WrapsSnapshotPredictionsAndHealth) {
  TestTree t;
  t.Write("/proc/sys/kernel/osrelease", "6.16.0\n");
  t.Write("/proc/loadavg", "0.00 0.00 0.00 1/1234 99\n");
  HostFs fs(t.root());
  const absl::Time now = absl::FromUnixSeconds(1800000000);
  Collector c(&fs, CollectorOptions(), [&] { return now; });
  ReportOptions o;
  o.host_id = "web-1";
  o.labels = {{"rack", "r1"}};
  o.interval_seconds = 15;
  ReportMaker maker(&c, o, [&] { return now; });
  v1::AgentHealth health;
  health.set_spool_depth(3);
  health.set_spool_dropped_total(2);
  v1::HostReport r = maker.Make(42, health);
  EXPECT_EQ(r.host_id(), "web-1");
  EXPECT_EQ(r.seq(), 42u);
  EXPECT_EQ(r.observed_at().seconds(), 1800000000);
  EXPECT_EQ(r.agent_version(), kAgentVersion);
  EXPECT_EQ(r.model_version(), kModelVersion);
  EXPECT_EQ(r.labels().at("rack"), "r1");
  EXPECT_EQ(r.interval_seconds(), 15);
  EXPECT_EQ(r.snapshot().threads().total(), 1234u);
  EXPECT_EQ(r.predictions().attach_size(), 10);
  EXPECT_EQ(r.health().spool_depth(), 3u);
  EXPECT_EQ(r.health().spool_dropped_total(), 2u);
  EXPECT_GT(r.health().cycle_seconds(), 0);
  EXPECT_GE(r.health().cycle_cpu_seconds(), 0);
  EXPECT_GT(r.health().rss_bytes(), 0u);
  // seq 0: a one-shot report carries none.
  EXPECT_EQ(maker.Make(0, {}).seq(), 0u);
}

TEST(ReportMakerTest, ProcessFigures) {
  EXPECT_GT(ThreadCpuSeconds(), 0);
  ASSERT_TRUE(ProcessRssBytes().has_value());
  EXPECT_GT(*ProcessRssBytes(), 0u);
  EXPECT_GE(PeakRssBytes(), *ProcessRssBytes() / 2);
}

}  // namespace
}  // namespace tracehealth::agent
