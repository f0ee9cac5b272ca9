#include "agent/report/report_maker.h"

#include "agent/testing/test_tree.h"
#include "common/procfs/host_fs.h"
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

// A cycle whose reads blocked (an attach holding trace_types_lock for 28 s)
// is observed when its snapshot was complete: 1800000000 + 28.
TEST(ReportMakerTest, ObservedWhenTheSnapshotIsComplete) {
  TestTree t;
  t.Write("/proc/sys/kernel/osrelease", "6.16.0\n");
  t.Write("/proc/loadavg", "0.00 0.00 0.00 1/1234 99\n");
  HostFs fs(t.root());
  const absl::Time start = absl::FromUnixSeconds(1800000000);
  absl::Time now = start;
  // The collector's clock is read during the collection: the blocked read
  // has ended by then.
  Collector c(&fs, CollectorOptions(), [&] {
    now = start + absl::Seconds(28);
    return now;
  });
  ReportMaker maker(&c, ReportOptions(), [&] { return now; });
  v1::HostReport r = maker.Make(1, {});
  EXPECT_EQ(r.observed_at().seconds(), 1800000028);
}

// What each input cost, per cycle: the inputs fixed for a boot only in the
// first cycle's report.
TEST(ReportMakerTest, ReportsWhatEachInputCost) {
  TestTree t;
  t.Write("/proc/sys/kernel/osrelease", "6.16.0\n");
  t.Write("/proc/loadavg", "0.00 0.00 0.00 1/1234 99\n");
  HostFs fs(t.root());
  absl::Time now = absl::FromUnixSeconds(1800000000);
  Collector c(&fs, CollectorOptions(), [&] { return now; });
  ReportOptions o;
  o.host_id = "web-1";
  ReportMaker maker(&c, o, [&] { return now; });
  auto row = [](const v1::HostReport& r,
                const std::string& input) -> const v1::InputCost* {
    for (const v1::InputCost& c : r.health().input_costs()) {
      if (c.input() == input) return &c;
    }
    return nullptr;
  };
  v1::HostReport first = maker.Make(1, {});
  const v1::InputCost* load = row(first, "/proc/loadavg");
  ASSERT_NE(load, nullptr);
  // 25 bytes: open, read, read (end of file), close.
  EXPECT_EQ(load->opens(), 1u);
  EXPECT_EQ(load->read_calls(), 2u);
  EXPECT_EQ(load->bytes_read(), 25u);
  EXPECT_EQ(load->syscalls(), 4u);
  ASSERT_NE(row(first, "/proc/sys/kernel/osrelease"), nullptr);
  EXPECT_EQ(row(first, "/proc/sys/kernel/osrelease")->bytes_read(), 7u);
  // Most bytes first: loadavg (25) before osrelease (7). (By position in
  // the list: the elements of a repeated message field are allocated one
  // by one, so their addresses say nothing of their order.)
  auto index = [&](const std::string& input) {
    for (int i = 0; i < first.health().input_costs_size(); ++i) {
      if (first.health().input_costs(i).input() == input) return i;
    }
    return -1;
  };
  EXPECT_LT(index("/proc/loadavg"), index("/proc/sys/kernel/osrelease"));
  // The fdinfo scan lists /proc (its entries: loadavg, sys).
  ASSERT_NE(row(first, "/proc"), nullptr);
  EXPECT_EQ(row(first, "/proc")->opens(), 1u);
  now += absl::Seconds(15);
  v1::HostReport second = maker.Make(2, {});
  EXPECT_NE(row(second, "/proc/loadavg"), nullptr);
  // Read once per boot, and every 10 minutes.
  EXPECT_EQ(row(second, "/proc/sys/kernel/osrelease"), nullptr);
  EXPECT_EQ(row(second, "/proc"), nullptr);
}

TEST(ReportMakerTest, InputCostsOrder) {
  InputCosts costs = {{"/a", {1, 1, 10, 3}},
                      {"/b", {1, 2, 10, 4}},
                      {"/c", {1, 0, 0, 1}},
                      {"/d", {0, 0, 0, 1}},
                      {"/e", {1, 5, 99, 7}}};
  v1::AgentHealth h;
  AddInputCosts(costs, &h);
  ASSERT_EQ(h.input_costs_size(), 5);
  // By bytes (99, 10, 10, 0, 0), then system calls (4 before 3), then name.
  EXPECT_EQ(h.input_costs(0).input(), "/e");
  EXPECT_EQ(h.input_costs(1).input(), "/b");
  EXPECT_EQ(h.input_costs(2).input(), "/a");
  EXPECT_EQ(h.input_costs(3).input(), "/c");
  EXPECT_EQ(h.input_costs(4).input(), "/d");
  EXPECT_EQ(h.input_costs(0).read_calls(), 5u);
  EXPECT_EQ(h.input_costs(0).bytes_read(), 99u);
  EXPECT_EQ(h.input_costs(0).syscalls(), 7u);
  EXPECT_EQ(h.input_costs(0).opens(), 1u);
}

TEST(ReportMakerTest, ProcessFigures) {
  EXPECT_GT(ThreadCpuSeconds(), 0);
  ASSERT_TRUE(ProcessRssBytes().has_value());
  EXPECT_GT(*ProcessRssBytes(), 0u);
}

}  // namespace
}  // namespace tracehealth::agent
