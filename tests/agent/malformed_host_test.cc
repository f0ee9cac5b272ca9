// A host whose files are malformed, truncated or missing: every such input
// becomes unknown with a reason, other inputs are still read, and nothing
// crashes.
#include <unistd.h>

#include <filesystem>
#include <string>

#include "absl/time/time.h"
#include "agent/collect/collector.h"
#include "common/models/evaluate.h"
#include "common/procfs/host_fs.h"
#include "gtest/gtest.h"
#include "tests/agent/fixture_util.h"

namespace tracehealth::testing {
namespace {

TEST(MalformedHostTest, BadFilesBecomeUnknownWithReasons) {
  std::string root = CopyFixture("preempt-none-6.16-240k");
  ASSERT_TRUE(WriteFile(root + "/proc/loadavg", "garbage\n").ok());
  ASSERT_TRUE(
      WriteFile(root + "/sys/kernel/debug/sched/preempt", "(turbo)\n").ok());
  auto gz = ReadFile(root + "/proc/config.gz");
  ASSERT_TRUE(
      WriteFile(root + "/proc/config.gz", gz->substr(0, gz->size() / 2)).ok());
  ASSERT_TRUE(WriteFile(root + "/sys/devices/system/cpu/online", "3-1\n").ok());
  ASSERT_TRUE(
      WriteFile(root + "/sys/kernel/debug/stackdepot/stats", "pools: lots\n")
          .ok());
  ASSERT_TRUE(WriteFile(root + "/proc/vmallocinfo", "not\nvmallocinfo\n").ok());
  ASSERT_TRUE(
      WriteFile(root + "/sys/kernel/tracing/dynamic_events", "???\n").ok());
  ASSERT_TRUE(
      WriteFile(root + "/proc/sys/kernel/watchdog_thresh", "ten\n").ok());
  ASSERT_TRUE(WriteFile(root + "/proc/1/fdinfo/1",
                        "link_type:\tkprobe_multi\nkprobe_cnt:\tx\n")
                  .ok());
  std::filesystem::remove(root + "/proc/cpuinfo");
  std::filesystem::remove(root + "/proc/sys/kernel/osrelease");

  HostFs fs(root);
  agent::Collector c(&fs, agent::CollectorOptions(),
                     [] { return absl::FromUnixSeconds(1796000000); });
  v1::HostSnapshot s = c.Collect();

  EXPECT_FALSE(s.threads().has_total());
  EXPECT_NE(UnknownReason(s, "threads.total").find("loadavg"),
            std::string::npos);
  EXPECT_FALSE(s.kernel().has_release());
  EXPECT_NE(UnknownReason(s, "kernel.release"), "");
  EXPECT_NE(UnknownReason(s, "kernel.config").find("gzip"), std::string::npos);
  // No config and no debugfs answer: the version string says
  // PREEMPT_DYNAMIC, which does not name the mode.
  EXPECT_EQ(s.kernel().preempt_mode(), v1::PREEMPT_MODE_UNKNOWN);
  EXPECT_NE(UnknownReason(s, "kernel.preempt_mode").find("sched/preempt"),
            std::string::npos);
  EXPECT_FALSE(s.cpus().has_online());
  EXPECT_NE(UnknownReason(s, "cpus.online"), "");
  EXPECT_NE(UnknownReason(s, "cpus.invlpgb").find("cpuinfo"),
            std::string::npos);
  EXPECT_FALSE(s.stackdepot().has_pools());
  EXPECT_NE(UnknownReason(s, "stackdepot.pools"), "");
  EXPECT_FALSE(s.vmalloc().has_unpurged_areas());
  EXPECT_NE(UnknownReason(s, "vmalloc.unpurged_areas"), "");
  EXPECT_NE(UnknownReason(s, "fgraph.dynamic_events"), "");
  EXPECT_FALSE(s.fgraph().has_active());  // a source was unreadable
  EXPECT_FALSE(s.thresholds().has_watchdog_thresh_seconds());
  EXPECT_NE(UnknownReason(s, "thresholds.watchdog_thresh_seconds"), "");
  EXPECT_FALSE(s.fgraph().has_null_threads_bound());

  // What could be read still is.
  EXPECT_EQ(s.threads().forks_since_boot(), 1953211u);
  EXPECT_EQ(s.thresholds().rcu_cpu_stall_timeout_seconds(), 21u);
  EXPECT_EQ(s.fgraph().tracefs_path(), "/sys/kernel/tracing");
  EXPECT_TRUE(s.vmalloc().has_vmalloc_used_bytes());

  // The models still answer, with lowered confidence.
  v1::Predictions p = EvaluateAll(s);
  ASSERT_EQ(p.attach_size(), 10);
  EXPECT_LT(p.attach(0).basis().confidence(), 1.0);
}

TEST(MalformedHostTest, EmptyRootDoesNotCrash) {
  std::string root = NewTempDir("empty-host-");
  HostFs fs(root);
  agent::Collector c(&fs, agent::CollectorOptions(),
                     [] { return absl::FromUnixSeconds(1796000000); });
  v1::HostSnapshot s = c.Collect();
  EXPECT_FALSE(s.kernel().has_release());
  EXPECT_FALSE(s.threads().has_total());
  EXPECT_GT(s.unknown_size(), 10);
  EXPECT_EQ(EvaluateAll(s).attach_size(), 10);
}

}  // namespace
}  // namespace tracehealth::testing
