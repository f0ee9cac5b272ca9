#include "agent/collect/thread_counts.h"

#include "agent/testing/test_tree.h"
#include "gtest/gtest.h"

namespace tracehealth::agent {
namespace {

TEST(ReadThreadCountsTest, ThreeFiles) {
  TestTree t;
  t.Write("/proc/loadavg", "0.52 0.58 0.59 41/240000 12345\n");
  t.Write("/proc/stat", "cpu  1 2 3 4\nbtime 1700000000\nprocesses 1953211\n");
  t.Write("/proc/uptime", "84240.12 1000.00\n");
  HostFs fs(t.root());
  v1::ThreadCounts c;
  c.set_total(7);  // cleared first
  UnknownInputs unknown;
  absl::StatusOr<std::string> stat = ReadThreadCounts(fs, &c, &unknown);
  ASSERT_TRUE(stat.ok());
  EXPECT_EQ(*stat, "cpu  1 2 3 4\nbtime 1700000000\nprocesses 1953211\n");
  EXPECT_EQ(c.total(), 240000u);
  EXPECT_EQ(c.running(), 41u);
  EXPECT_EQ(c.forks_since_boot(), 1953211u);
  EXPECT_DOUBLE_EQ(c.uptime_seconds(), 84240.12);
  EXPECT_EQ(unknown.size(), 0);
}

TEST(ReadThreadCountsTest, EachMissingCountIsNamed) {
  TestTree t;
  t.Write("/proc/stat", "cpu  1 2 3 4\n");  // no "processes" line
  HostFs fs(t.root());
  v1::ThreadCounts c;
  UnknownInputs unknown;
  EXPECT_TRUE(ReadThreadCounts(fs, &c, &unknown).ok());
  EXPECT_FALSE(c.has_total());
  EXPECT_FALSE(c.has_forks_since_boot());
  EXPECT_FALSE(c.has_uptime_seconds());
  ASSERT_EQ(unknown.size(), 3);
  EXPECT_EQ(unknown[0].input(), "threads.total");
  EXPECT_EQ(unknown[0].reason(), "/proc/loadavg: No such file or directory");
  EXPECT_EQ(unknown[1].input(), "threads.forks_since_boot");
  EXPECT_EQ(unknown[2].input(), "threads.uptime_seconds");
  // Without /proc/stat its error comes back.
  TestTree empty;
  HostFs none(empty.root());
  UnknownInputs u2;
  EXPECT_TRUE(absl::IsNotFound(ReadThreadCounts(none, &c, &u2).status()));
  EXPECT_EQ(u2[1].reason(), "/proc/stat: No such file or directory");
}

}  // namespace
}  // namespace tracehealth::agent
