#include "agent/parsers/proc.h"

#include "gtest/gtest.h"

namespace tracehealth::agent {
namespace {

TEST(LoadavgTest, ParsesThreadCounts) {
  auto r = ParseLoadavg("0.05 0.18 0.10 3/240117 6695\n");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->running, 3u);
  EXPECT_EQ(r->total, 240117u);
}

TEST(LoadavgTest, RejectsMalformed) {
  for (const char* bad : {"", "0.05 0.18 0.10 3 6695", "0.05 0.18 0.10 a/b 1",
                          "0.05 0.18 0.10 3/240117", "1 2 3 4/5 6 7",
                          "0.0 0.0 0.0 9/5 1", "0.0 0.0 0.0 0/0 1"}) {
    EXPECT_FALSE(ParseLoadavg(bad).ok()) << bad;
  }
}

constexpr char kStat[] =
    "cpu  10132153 290696 3084719 46828483 16683 0 25195 0 0 0\n"
    "cpu0 1393280 32966 572056 13343292 6130 0 17875 0 0 0\n"
    "intr 199292345 0 9 0 0 0\n"
    "ctxt 2718474843\n"
    "btime 1795984241\n"
    "processes 6697\n"
    "procs_running 1\n"
    "procs_blocked 0\n";

TEST(StatTest, ParsesProcessesAndBtime) {
  auto p = ParseStatProcesses(kStat);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(*p, 6697u);
  auto b = ParseStatBtime(kStat);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(*b, 1795984241);
}

TEST(StatTest, RejectsMissingOrMalformed) {
  EXPECT_FALSE(ParseStatProcesses("cpu 1 2 3\n").ok());
  EXPECT_FALSE(ParseStatProcesses("processes x\n").ok());
  EXPECT_FALSE(ParseStatProcesses("processes 1 2\n").ok());
  EXPECT_FALSE(ParseStatProcesses("processes -5\n").ok());
  EXPECT_FALSE(ParseStatBtime("btime 0\n").ok());
  // "processes_x" is not "processes".
  EXPECT_FALSE(ParseStatProcesses("processes_x 5\n").ok());
}

TEST(UptimeTest, Parses) {
  auto r = ParseUptime("350735.47 234388.90\n");
  ASSERT_TRUE(r.ok());
  EXPECT_DOUBLE_EQ(*r, 350735.47);
  EXPECT_FALSE(ParseUptime("abc def\n").ok());
  EXPECT_FALSE(ParseUptime("1.0\n").ok());
}

TEST(SingleIntegerTest, ParsesAndRejects) {
  EXPECT_EQ(*ParseSingleInteger("10\n"), 10);
  EXPECT_EQ(*ParseSingleInteger("0"), 0);
  EXPECT_FALSE(ParseSingleInteger("").ok());
  EXPECT_FALSE(ParseSingleInteger("10 20\n").ok());
  EXPECT_FALSE(ParseSingleInteger("Y\n").ok());
}

TEST(MeminfoTest, ParsesVmallocLines) {
  auto r = ParseMeminfoVmalloc(
      "MemTotal:       24568312 kB\n"
      "VmallocTotal:   34359738367 kB\n"
      "VmallocUsed:       15596 kB\n"
      "VmallocChunk:          0 kB\n"
      "Percpu:             1760 kB\n");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r->total_bytes, 34359738367ull * 1024);
  EXPECT_EQ(*r->used_bytes, 15596ull * 1024);
  EXPECT_EQ(*r->chunk_bytes, 0u);
}

TEST(MeminfoTest, RejectsMissingOrMalformed) {
  EXPECT_FALSE(ParseMeminfoVmalloc("MemTotal: 1 kB\n").ok());
  EXPECT_FALSE(ParseMeminfoVmalloc("VmallocUsed: lots kB\n").ok());
  EXPECT_FALSE(ParseMeminfoVmalloc("VmallocUsed: 5 MB\n").ok());
}

TEST(MountsTest, FindsTracefsAndDebugfs) {
  auto r = ParseMounts(
      "sysfs /sys sysfs rw,nosuid,nodev,noexec,relatime 0 0\n"
      "tracefs /mnt/my\\040trace tracefs rw,relatime 0 0\n"
      "debugfs /sys/kernel/debug debugfs rw,nosuid,nodev,noexec,relatime 0 0\n"
      "tracefs /sys/kernel/tracing tracefs rw,nosuid,nodev,noexec 0 0\n");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r->tracefs, "/sys/kernel/tracing");
  EXPECT_EQ(*r->debugfs, "/sys/kernel/debug");

  auto one = ParseMounts("tracefs /mnt/my\\040trace tracefs rw 0 0\n");
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(*one->tracefs, "/mnt/my trace");
  EXPECT_FALSE(one->debugfs.has_value());
}

TEST(MountsTest, NoTracingFilesystems) {
  auto r = ParseMounts("proc /proc proc rw 0 0\n");
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->tracefs.has_value());
  EXPECT_FALSE(r->debugfs.has_value());
}

TEST(MountsTest, RejectsMalformed) {
  EXPECT_FALSE(ParseMounts("tracefs\n").ok());
}

TEST(CmdlineTest, FindsParameters) {
  constexpr char kCmd[] =
      "BOOT_IMAGE=/vmlinuz root=UUID=1 ro quiet stack_depot_max_pools=16384 "
      "preempt=full acpi_osi=\"Windows 2020\" -- init_arg preempt=none\n";
  EXPECT_EQ(*CmdlineParam(kCmd, "preempt"), "full");
  EXPECT_EQ(*CmdlineParam(kCmd, "acpi_osi"), "Windows 2020");
  EXPECT_EQ(*CmdlineParam(kCmd, "quiet"), "");
  EXPECT_FALSE(CmdlineParam(kCmd, "init_arg").has_value());
  EXPECT_FALSE(CmdlineParam(kCmd, "root=UUID").has_value());
  EXPECT_EQ(CmdlineParam(kCmd, "stack_depot_max_pools"), "16384");
}

}  // namespace
}  // namespace tracehealth::agent
