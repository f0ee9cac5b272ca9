#include "agent/collect/collector.h"

#include <string>

#include "agent/testing/test_tree.h"
#include "common/procfs/host_fs.h"
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

// A PREEMPT_RT kernel that is also PREEMPT_DYNAMIC (Debian's 6.18.15-rt:
// sched/preempt "(full) lazy") runs RT: the config wins over debugfs, and
// the version string where there is no config.
TEST(CollectorTest, RtBuildWinsOverSchedPreempt) {
  TestTree t;
  Basics(t, "6.18.15+deb13-rt-amd64",
         "#1 SMP PREEMPT_RT Debian 6.18.15-1~bpo13+1");
  t.Write("/proc/mounts", "debugfs /sys/kernel/debug debugfs rw 0 0\n");
  t.Write("/sys/kernel/debug/sched/preempt", "(full) lazy\n");
  t.Write("/proc/cmdline", "ro\n");
  t.Write("/boot/config-6.18.15+deb13-rt-amd64",
          "CONFIG_PREEMPT_RT=y\nCONFIG_PREEMPT_DYNAMIC=y\n");
  HostFs fs(t.root());
  auto collect = [&fs] {
    return Collector(&fs, CollectorOptions(), [] { return kT0; }).Collect();
  };
  v1::HostSnapshot s = collect();
  EXPECT_EQ(s.kernel().preempt_mode(), v1::PREEMPT_MODE_RT);
  EXPECT_NE(s.kernel().preempt_source(), "debugfs sched/preempt");
  // No config: the version string's PREEMPT_RT decides.
  t.Write("/boot/config-6.18.15+deb13-rt-amd64", "");
  s = collect();
  EXPECT_EQ(s.kernel().preempt_mode(), v1::PREEMPT_MODE_RT);
  EXPECT_EQ(s.kernel().preempt_source(), "kernel version string");
  // Not RT: sched/preempt as before.
  t.Write("/boot/config-6.18.15+deb13-rt-amd64",
          "CONFIG_PREEMPT_LAZY=y\nCONFIG_PREEMPT_DYNAMIC=y\n");
  t.Write("/proc/sys/kernel/version", "#1 SMP PREEMPT_DYNAMIC Debian\n");
  s = collect();
  EXPECT_EQ(s.kernel().preempt_mode(), v1::PREEMPT_MODE_FULL);
  EXPECT_EQ(s.kernel().preempt_source(), "debugfs sched/preempt");
}

// The six threshold files: 0 to 1,000,000 taken as they are, anything
// else unknown with the file and the value named.
TEST(CollectorTest, ThresholdFilesAndTheirRange) {
  TestTree t;
  Basics(t, "6.16.0", "#1 SMP PREEMPT_DYNAMIC x");
  t.Write("/proc/sys/kernel/watchdog_thresh", "0\n");
  t.Write("/proc/sys/kernel/softlockup_panic", "1\n");
  t.Write("/sys/module/rcupdate/parameters/rcu_cpu_stall_timeout", "1000000\n");
  t.Write("/proc/sys/kernel/panic_on_rcu_stall", "0\n");
  HostFs fs(t.root());
  auto collect = [&fs] {
    return Collector(&fs, CollectorOptions(), [] { return kT0; }).Collect();
  };
  {
    // No hung-task files (no CONFIG_DETECT_HUNG_TASK): unknown, not 120 s.
    v1::HostSnapshot s = collect();
    EXPECT_FALSE(s.thresholds().has_hung_task_timeout_seconds());
    EXPECT_FALSE(s.thresholds().has_hung_task_panic());
    EXPECT_NE(Unknown(s, "thresholds.hung_task_timeout_seconds"), "");
    EXPECT_NE(Unknown(s, "thresholds.hung_task_panic"), "");
  }
  t.Write("/proc/sys/kernel/hung_task_timeout_secs", "120\n");
  t.Write("/proc/sys/kernel/hung_task_panic", "1\n");
  {
    v1::HostSnapshot s = collect();
    ASSERT_TRUE(s.thresholds().has_hung_task_timeout_seconds());
    EXPECT_EQ(s.thresholds().hung_task_timeout_seconds(), 120u);
    ASSERT_TRUE(s.thresholds().has_hung_task_panic());
    EXPECT_TRUE(s.thresholds().hung_task_panic());
    EXPECT_EQ(Unknown(s, "thresholds.hung_task_timeout_seconds"), "");
    ASSERT_TRUE(s.thresholds().has_watchdog_thresh_seconds());
    EXPECT_EQ(s.thresholds().watchdog_thresh_seconds(), 0u);
    EXPECT_TRUE(s.thresholds().softlockup_panic());
    EXPECT_EQ(s.thresholds().rcu_cpu_stall_timeout_seconds(), 1000000u);
    ASSERT_TRUE(s.thresholds().has_panic_on_rcu_stall());
    EXPECT_FALSE(s.thresholds().panic_on_rcu_stall());
    EXPECT_EQ(Unknown(s, "thresholds.watchdog_thresh_seconds"), "");
  }
  t.Write("/proc/sys/kernel/watchdog_thresh", "-1\n");
  t.Write("/sys/module/rcupdate/parameters/rcu_cpu_stall_timeout", "1000001\n");
  t.Write("/proc/sys/kernel/panic_on_rcu_stall", "yes\n");
  // 0 turns the detector off: read as 0, not unknown.
  t.Write("/proc/sys/kernel/hung_task_timeout_secs", "0\n");
  {
    v1::HostSnapshot s = collect();
    ASSERT_TRUE(s.thresholds().has_hung_task_timeout_seconds());
    EXPECT_EQ(s.thresholds().hung_task_timeout_seconds(), 0u);
    EXPECT_FALSE(s.thresholds().has_watchdog_thresh_seconds());
    EXPECT_EQ(Unknown(s, "thresholds.watchdog_thresh_seconds"),
              "/proc/sys/kernel/watchdog_thresh: implausible value -1");
    EXPECT_FALSE(s.thresholds().has_rcu_cpu_stall_timeout_seconds());
    EXPECT_EQ(Unknown(s, "thresholds.rcu_cpu_stall_timeout_seconds"),
              "/sys/module/rcupdate/parameters/rcu_cpu_stall_timeout: "
              "implausible value 1000001");
    EXPECT_FALSE(s.thresholds().has_panic_on_rcu_stall());
    EXPECT_EQ(Unknown(s, "thresholds.panic_on_rcu_stall"),
              "/proc/sys/kernel/panic_on_rcu_stall: integer file: 'yes' is "
              "not one integer");
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

// Bytes of `path` read in the collector's last cycle (0: not read).
uint64_t BytesRead(const Collector& c, const std::string& path) {
  for (const auto& [input, cost] : c.cycle_costs()) {
    if (input == path) return cost.bytes;
  }
  return 0;
}

uint64_t VmallocinfoBytes(const Collector& c) {
  return BytesRead(c, "/proc/vmallocinfo");
}

// Only where the purge model applies (CONFIG_KASAN_VMALLOC=y), and then
// every vmallocinfo interval: the counts of the last read stand between.
TEST(CollectorTest, VmallocinfoOnlyWithKasanVmallocAndRarely) {
  const std::string one =
      "0x0000000011111111-0x0000000022222222   40960 unpurged vm_area\n";
  const std::string two =
      one + "0x0000000022222222-0x0000000033333333    8192 unpurged vm_area\n";
  for (bool kasan : {false, true}) {
    TestTree t;
    Basics(t, "6.12.5", "#1 SMP x");
    t.Write("/boot/config-6.12.5",
            std::string("CONFIG_X86=y\n") +
                (kasan ? "CONFIG_KASAN=y\nCONFIG_KASAN_VMALLOC=y\n"
                       : "# CONFIG_KASAN is not set\n"));
    t.Write("/proc/vmallocinfo", one);
    HostFs fs(t.root());
    absl::Time now = kT0;
    Collector c(&fs, CollectorOptions(), [&] { return now; });
    v1::HostSnapshot s = c.Collect();
    if (!kasan) {
      EXPECT_FALSE(s.vmalloc().has_unpurged_areas());
      EXPECT_FALSE(s.vmalloc().has_vmallocinfo_read_at());
      EXPECT_EQ(VmallocinfoBytes(c), 0u);
    } else {
      EXPECT_EQ(s.vmalloc().unpurged_areas(), 1u);
      EXPECT_EQ(s.vmalloc().vmallocinfo_read_at().seconds(), 1800000000);
      EXPECT_EQ(VmallocinfoBytes(c), one.size());
    }
    t.Write("/proc/vmallocinfo", two);
    now += absl::Seconds(15);
    s = c.Collect();
    // Not read again before the interval: the first read's counts.
    EXPECT_EQ(VmallocinfoBytes(c), 0u);
    EXPECT_EQ(s.vmalloc().unpurged_areas(), kasan ? 1u : 0u);
    EXPECT_EQ(s.vmalloc().has_unpurged_areas(), kasan);
    now += absl::Minutes(10) - absl::Seconds(15);
    s = c.Collect();
    EXPECT_EQ(VmallocinfoBytes(c), kasan ? two.size() : 0u);
    EXPECT_EQ(s.vmalloc().unpurged_areas(), kasan ? 2u : 0u);
    EXPECT_EQ(s.vmalloc().unpurged_shadow_page_areas(), kasan ? 1u : 0u);
    if (kasan) {
      EXPECT_EQ(s.vmalloc().vmallocinfo_read_at().seconds(), 1800000600);
    }
  }
}

TEST(CollectorTest, VmallocinfoNotReadWithoutAConfigOrWithIntervalInf) {
  TestTree t;
  Basics(t, "6.12.5", "#1 SMP x");
  t.Write("/proc/vmallocinfo",
          "0x0000000011111111-0x0000000022222222   40960 unpurged vm_area\n");
  HostFs fs(t.root());
  {
    Collector c(&fs, CollectorOptions(), [] { return kT0; });
    v1::HostSnapshot s = c.Collect();
    EXPECT_EQ(VmallocinfoBytes(c), 0u);
    EXPECT_EQ(Unknown(s, "vmalloc.unpurged_areas"),
              "/proc/vmallocinfo not read: CONFIG_KASAN_VMALLOC unknown (no "
              "kernel config)");
  }
  t.Write("/boot/config-6.12.5", "CONFIG_KASAN=y\nCONFIG_KASAN_VMALLOC=y\n");
  CollectorOptions o;
  o.vmallocinfo_interval = absl::InfiniteDuration();
  Collector c(&fs, o, [] { return kT0; });
  v1::HostSnapshot s = c.Collect();
  EXPECT_EQ(VmallocinfoBytes(c), 0u);
  EXPECT_EQ(Unknown(s, "vmalloc.unpurged_areas"),
            "/proc/vmallocinfo not read (vmallocinfo interval inf)");
}

TEST(CollectorTest, MalformedVmallocinfoIsUnknown) {
  TestTree t;
  Basics(t, "6.12.5", "#1 SMP x");
  t.Write("/boot/config-6.12.5", "CONFIG_KASAN=y\nCONFIG_KASAN_VMALLOC=y\n");
  t.Write("/proc/vmallocinfo", "not\nvmallocinfo\n");
  HostFs fs(t.root());
  Collector c(&fs, CollectorOptions(), [] { return kT0; });
  v1::HostSnapshot s = c.Collect();
  EXPECT_FALSE(s.vmalloc().has_unpurged_areas());
  EXPECT_NE(Unknown(s, "vmalloc.unpurged_areas"), "");
  EXPECT_EQ(Unknown(s, "vmalloc.unpurged_areas").find("not read"),
            std::string::npos);
}

// The mounts are read at start, then every mounts interval, and sooner when
// tracefs shows up at /sys/kernel/tracing.
TEST(CollectorTest, MountsReadRarely) {
  TestTree t;
  Basics(t, "6.16.0", "#1 SMP PREEMPT_DYNAMIC x");
  t.Write("/proc/mounts", "proc /proc proc rw 0 0\n");
  HostFs fs(t.root());
  absl::Time now = kT0;
  Collector c(&fs, CollectorOptions(), [&] { return now; });
  auto mounts_read = [&] { return BytesRead(c, "/proc/mounts") > 0; };
  v1::HostSnapshot s = c.Collect();
  EXPECT_TRUE(mounts_read());
  EXPECT_FALSE(s.fgraph().has_tracefs_path());
  now += absl::Seconds(15);
  c.Collect();
  EXPECT_FALSE(mounts_read());
  // Mounted now: seen the next cycle.
  t.Write("/proc/mounts", "tracefs /sys/kernel/tracing tracefs rw 0 0\n");
  t.Write("/sys/kernel/tracing/current_tracer", "nop\n");
  now += absl::Seconds(15);
  s = c.Collect();
  EXPECT_TRUE(mounts_read());
  EXPECT_EQ(s.fgraph().tracefs_path(), "/sys/kernel/tracing");
  now += absl::Seconds(15);
  c.Collect();
  EXPECT_FALSE(mounts_read());
  // 15 s short of 10 minutes after the last read, then 10 minutes.
  now += absl::Minutes(10) - absl::Seconds(30);
  c.Collect();
  EXPECT_FALSE(mounts_read());
  now += absl::Seconds(15);
  c.Collect();
  EXPECT_TRUE(mounts_read());
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
