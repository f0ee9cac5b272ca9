#include "agent/collect/collector.h"

#include <string>

#include "agent/collect/host_fs.h"
#include "agent/testing/test_tree.h"
#include "gtest/gtest.h"

namespace tracehealth::agent {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1800000000);

std::string Unknown(const v1::HostSnapshot& s, const std::string& input) {
  for (const auto& u : s.unknown()) {
    if (u.input() == input) return u.reason();
  }
  return "";
}

// A minimal host: release, version, loadavg, stat.
void Basics(const TestTree& t, const std::string& release,
            const std::string& version) {
  t.Write("/proc/sys/kernel/osrelease", release + "\n");
  t.Write("/proc/sys/kernel/version", version + "\n");
  t.Write("/proc/loadavg", "0.00 0.00 0.00 1/500 99\n");
  t.Write("/proc/stat", "cpu 1 2 3\nbtime 1795000000\nprocesses 7000\n");
  t.Write("/proc/sys/kernel/random/boot_id", "b-1\n");
}

TEST(CollectorTest, PreemptionSourcesInOrder) {
  TestTree t;
  Basics(t, "6.16.0", "#1 SMP PREEMPT_DYNAMIC x");
  t.Write("/proc/mounts", "debugfs /sys/kernel/debug debugfs rw 0 0\n");
  t.Write("/boot/config-6.16.0",
          "CONFIG_PREEMPT_VOLUNTARY=y\nCONFIG_PREEMPT_DYNAMIC=y\n");
  t.Write("/proc/cmdline", "ro preempt=full\n");
  t.Write("/sys/kernel/debug/sched/preempt", "none voluntary full (lazy)\n");
  HostFs fs(t.root());
  {
    Collector c(&fs, CollectorOptions(), [] { return kT0; });
    v1::HostSnapshot s = c.Collect();
    EXPECT_EQ(s.kernel().preempt_mode(), v1::PREEMPT_MODE_LAZY);
    EXPECT_EQ(s.kernel().preempt_source(), "debugfs sched/preempt");
  }
  // Without sched/preempt: the config, with preempt= on a dynamic kernel.
  t.Write("/sys/kernel/debug/sched/preempt", "");
  {
    Collector c(&fs, CollectorOptions(), [] { return kT0; });
    v1::HostSnapshot s = c.Collect();
    EXPECT_EQ(s.kernel().preempt_mode(), v1::PREEMPT_MODE_FULL);
    EXPECT_EQ(s.kernel().preempt_source(),
              "config and preempt= boot parameter");
    EXPECT_EQ(s.kernel().config_source(), "/boot/config-6.16.0");
  }
}

// In a container with the host's PID namespace and the host's /proc and /sys
// mounted under --root, the agent's own mounts name container paths; PID 1's
// name the host's, which are the ones that exist under the root.
TEST(CollectorTest, MountsFromPid1WhenReadable) {
  TestTree t;
  Basics(t, "6.16.0", "#1 SMP PREEMPT_DYNAMIC x");
  t.Write("/proc/mounts", "tracefs /host/sys/kernel/tracing tracefs rw 0 0\n");
  t.Write("/proc/1/mounts", "tracefs /sys/kernel/tracing tracefs rw 0 0\n");
  t.Write("/sys/kernel/tracing/current_tracer", "function_graph\n");
  HostFs fs(t.root());
  Collector c(&fs, CollectorOptions(), [] { return kT0; });
  v1::HostSnapshot s = c.Collect();
  EXPECT_EQ(s.fgraph().tracefs_path(), "/sys/kernel/tracing");
  ASSERT_GE(s.fgraph().users_size(), 1);
  EXPECT_EQ(s.fgraph().users(0).kind(),
            v1::FgraphUser::KIND_FUNCTION_GRAPH_TRACER);
}

TEST(CollectorTest, VersionStringWhenNoConfig) {
  TestTree t;
  Basics(t, "6.8.0", "#1 SMP PREEMPT_RT Mon Jan 1");
  HostFs fs(t.root());
  Collector c(&fs, CollectorOptions(), [] { return kT0; });
  v1::HostSnapshot s = c.Collect();
  EXPECT_EQ(s.kernel().preempt_mode(), v1::PREEMPT_MODE_RT);
  EXPECT_EQ(s.kernel().preempt_source(), "kernel version string");
  EXPECT_NE(Unknown(s, "kernel.config"), "");
  EXPECT_NE(Unknown(s, "kernel.page_size"), "");
}

TEST(CollectorTest, StackDepotBudgetFromCmdlineFrom617) {
  TestTree t;
  Basics(t, "6.17.1", "#1 SMP PREEMPT_DYNAMIC x");
  t.Write("/proc/mounts", "debugfs /sys/kernel/debug debugfs rw 0 0\n");
  t.Write("/proc/cmdline", "ro stack_depot_max_pools=16384\n");
  t.Write("/sys/kernel/debug/stackdepot/stats", "pools: 9000\n");
  HostFs fs(t.root());
  absl::Time now = kT0;
  Collector c(&fs, CollectorOptions(), [&] { return now; });
  v1::HostSnapshot s = c.Collect();
  EXPECT_EQ(s.stackdepot().pools(), 9000u);
  EXPECT_EQ(s.stackdepot().max_pools(), 16384u);
  EXPECT_EQ(s.stackdepot().max_pools_source(),
            "cmdline stack_depot_max_pools=");
  // History grows on the spacing schedule, always ending with now.
  t.Write("/sys/kernel/debug/stackdepot/stats", "pools: 9100\n");
  now += absl::Minutes(6);
  s = c.Collect();
  ASSERT_EQ(s.depot_history_size(), 2);
  EXPECT_EQ(s.depot_history(0).pools(), 9000u);
  EXPECT_EQ(s.depot_history(1).pools(), 9100u);
}

TEST(CollectorTest, StackDepotBudgetIgnoresCmdlineBefore617) {
  TestTree t;
  Basics(t, "6.12.5", "#1 SMP x");
  t.Write("/proc/cmdline", "ro stack_depot_max_pools=16384\n");
  HostFs fs(t.root());
  Collector c(&fs, CollectorOptions(), [] { return kT0; });
  v1::HostSnapshot s = c.Collect();
  EXPECT_EQ(s.stackdepot().max_pools(), 8192u);
  EXPECT_EQ(s.stackdepot().max_pools_source(), "hard cap before 6.17");
  EXPECT_EQ(Unknown(s, "stackdepot.pools"), "debugfs not mounted");
}

TEST(CollectorTest, VmallocinfoEveryCycleOnlyWithKasanVmalloc) {
  for (bool kasan : {false, true}) {
    TestTree t;
    Basics(t, "6.12.5", "#1 SMP x");
    t.Write("/boot/config-6.12.5",
            std::string("CONFIG_X86=y\n") +
                (kasan ? "CONFIG_KASAN=y\nCONFIG_KASAN_VMALLOC=y\n"
                       : "# CONFIG_KASAN is not set\n"));
    t.Write("/proc/vmallocinfo",
            "0x0000000011111111-0x0000000022222222   40960 unpurged vm_area\n");
    HostFs fs(t.root());
    absl::Time now = kT0;
    Collector c(&fs, CollectorOptions(), [&] { return now; });
    EXPECT_EQ(c.Collect().vmalloc().unpurged_areas(), 1u);
    t.Write("/proc/vmallocinfo",
            "0x0000000011111111-0x0000000022222222   40960 unpurged vm_area\n"
            "0x0000000022222222-0x0000000033333333    8192 unpurged vm_area\n");
    now += absl::Seconds(15);
    v1::HostSnapshot s = c.Collect();
    // With KASAN_VMALLOC the fresh count; without, the cached one (still
    // reported, not unknown).
    EXPECT_EQ(s.vmalloc().unpurged_areas(), kasan ? 2u : 1u) << kasan;
    EXPECT_EQ(s.vmalloc().unpurged_shadow_page_areas(), 1u);
    now += absl::Minutes(10);
    EXPECT_EQ(c.Collect().vmalloc().unpurged_areas(), 2u);
  }
}

TEST(CollectorTest, BootConstantInputsReadOnce) {
  TestTree t;
  Basics(t, "6.16.0", "#1 SMP x");
  t.Write("/proc/cpuinfo", "processor\t: 0\nmodel name\t: X\nflags\t\t: fpu\n");
  HostFs fs(t.root());
  absl::Time now = kT0;
  Collector c(&fs, CollectorOptions(), [&] { return now; });
  c.Collect();
  uint64_t first = fs.opens();
  now += absl::Seconds(15);
  c.Collect();
  uint64_t second = fs.opens() - first;
  now += absl::Seconds(15);
  c.Collect();
  EXPECT_EQ(fs.opens() - first - second, second);  // steady
  EXPECT_LT(second, first);
}

}  // namespace
}  // namespace tracehealth::agent
