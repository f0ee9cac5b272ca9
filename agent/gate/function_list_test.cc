#include "agent/gate/function_list.h"

#include "agent/testing/test_tree.h"
#include "gtest/gtest.h"

namespace tracehealth::agent {
namespace {

constexpr char kList[] =
    "vfs_read\n"
    "vfs_write\n"
    "do_sys_open\n"
    "\n"
    "ext4_file_read_iter [ext4]\n"
    "ext4_file_write_iter [ext4]\n"
    "vfs_read\n";  // a second site of the same name

TEST(FunctionListTest, LinesAreSites) {
  FunctionList list = FunctionList::FromText(kList);
  EXPECT_EQ(list.size(), 6u);
  EXPECT_EQ(list.Count(*FtraceFilter::Parse("vfs_*")), 3u);
  EXPECT_EQ(list.Count(*FtraceFilter::Parse("*_iter:mod:ext4")), 2u);
  EXPECT_EQ(list.Count(*FtraceFilter::Parse("*read*")), 3u);
  EXPECT_EQ(list.Count(*FtraceFilter::Parse("nothing")), 0u);
  // One name or one prefix: by binary search over the sorted names; the
  // same counts as a scan.
  EXPECT_EQ(list.Count(*FtraceFilter::Parse("vfs_read")), 2u);
  EXPECT_EQ(list.Count(*FtraceFilter::Parse("vfs_rea")), 0u);
  EXPECT_EQ(list.Count(*FtraceFilter::Parse("ext4_*")), 2u);
  EXPECT_EQ(list.Count(*FtraceFilter::Parse("e*")), 2u);
  EXPECT_EQ(list.Count(*FtraceFilter::Parse("z*")), 0u);
  EXPECT_EQ(list.Count(*FtraceFilter::Parse("*")), 6u);
}

TEST(FunctionCacheTest, ReadOnceAgainWhenTheCountChanges) {
  TestTree t;
  t.Write("/sys/kernel/tracing/available_filter_functions", kList);
  HostFs fs(t.root());
  FunctionCache cache(&fs);
  const FtraceFilter vfs = *FtraceFilter::Parse("vfs_*");
  absl::StatusOr<FunctionCache::Counted> c =
      cache.Count("/sys/kernel/tracing", 6, vfs);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->matches, 3u);
  EXPECT_EQ(c->functions, 6u);
  // The same count of lines: not read again (a changed file is not seen).
  t.Write("/sys/kernel/tracing/available_filter_functions",
          std::string(kList) + "vfs_fsync [x]\n");
  EXPECT_EQ(cache.Count("/sys/kernel/tracing", 6, vfs)->matches, 3u);
  EXPECT_EQ(cache.Count("/sys/kernel/tracing", std::nullopt, vfs)->matches, 3u);
  EXPECT_EQ(cache.loads(), 1u);
  // The collector counted 7 lines: a module came; read again.
  c = cache.Count("/sys/kernel/tracing", 7, vfs);
  EXPECT_EQ(c->matches, 4u);
  EXPECT_EQ(c->functions, 7u);
  EXPECT_EQ(cache.loads(), 2u);
}

TEST(FunctionCacheTest, WarmLoadsAheadOfTheFirstCount) {
  TestTree t;
  t.Write("/sys/kernel/tracing/available_filter_functions", kList);
  HostFs fs(t.root());
  FunctionCache cache(&fs);
  ASSERT_TRUE(cache.Warm("/sys/kernel/tracing", 6).ok());
  ASSERT_TRUE(cache.Warm("/sys/kernel/tracing", 6).ok());
  EXPECT_EQ(cache.loads(), 1u);
  EXPECT_EQ(
      cache.Count("/sys/kernel/tracing", 6, *FtraceFilter::Parse("*"))->matches,
      6u);
  EXPECT_EQ(cache.loads(), 1u);
  EXPECT_TRUE(absl::IsNotFound(cache.Warm("/elsewhere", std::nullopt)));
}

TEST(FunctionCacheTest, MissingFile) {
  TestTree t;
  t.Write("/sys/kernel/tracing/current_tracer", "nop\n");
  HostFs fs(t.root());
  FunctionCache cache(&fs);
  absl::StatusOr<FunctionCache::Counted> c = cache.Count(
      "/sys/kernel/tracing", std::nullopt, *FtraceFilter::Parse("vfs_*"));
  EXPECT_TRUE(absl::IsNotFound(c.status())) << c.status();
}

}  // namespace
}  // namespace tracehealth::agent
