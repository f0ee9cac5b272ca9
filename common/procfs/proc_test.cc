#include "common/procfs/proc.h"

#include <string>

#include "common/testing/refusal.h"
#include "gtest/gtest.h"

namespace tracehealth {
namespace {

TEST(LoadavgTest, ParsesThreadCounts) {
  auto r = ParseLoadavg("0.05 0.18 0.10 3/240117 6695\n");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->running, 3u);
  EXPECT_EQ(r->total, 240117u);
}

TEST(LoadavgTest, RejectsMalformed) {
  const std::pair<const char*, const char*> cases[] = {
      {"", "/proc/loadavg: expected 5 fields, got 0"},
      {"0.05 0.18 0.10 3 6695",
       "/proc/loadavg: 4th field '3' is not running/total"},
      {"0.05 0.18 0.10 a/b 1",
       "/proc/loadavg: 4th field 'a/b' is not running/total"},
      {"0.05 0.18 0.10 3/240117", "/proc/loadavg: expected 5 fields, got 4"},
      {"1 2 3 4/5 6 7", "/proc/loadavg: expected 5 fields, got 6"},
      {"0.0 0.0 0.0 9/5 1", "/proc/loadavg: implausible thread counts '9/5'"},
      {"0.0 0.0 0.0 6/5 1", "/proc/loadavg: implausible thread counts '6/5'"},
      {"0.0 0.0 0.0 0/0 1", "/proc/loadavg: implausible thread counts '0/0'"},
  };
  for (const auto& [text, message] : cases) {
    SCOPED_TRACE(text);
    ExpectRefused(ParseLoadavg(text).status(), message);
  }
}

// Every thread running is plausible (running == total); 0 running too.
TEST(LoadavgTest, BoundariesAccepted) {
  auto r = ParseLoadavg("0.0 0.0 0.0 5/5 1");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->running, 5u);
  EXPECT_EQ(r->total, 5u);
  r = ParseLoadavg("  0.0\t0.0 0.0 0/1 1  \n");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->running, 0u);
  EXPECT_EQ(r->total, 1u);
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
  ExpectRefused(ParseStatProcesses("cpu 1 2 3\n").status(),
                "/proc/stat: no 'processes' line");
  ExpectRefused(ParseStatProcesses("processes x\n").status(),
                "/proc/stat: processes 'x' not a number");
  ExpectRefused(ParseStatProcesses("processes 1 2\n").status(),
                "/proc/stat: malformed 'processes' line");
  ExpectRefused(ParseStatProcesses("processes -5\n").status(),
                "/proc/stat: processes '-5' not a number");
  ExpectRefused(ParseStatBtime("btime 0\n").status(),
                "/proc/stat: btime '0' not a time");
  ExpectRefused(ParseStatBtime("btime -1\n").status(),
                "/proc/stat: btime '-1' not a time");
  // "processes_x" is not "processes".
  ExpectRefused(ParseStatProcesses("processes_x 5\n").status(),
                "/proc/stat: no 'processes' line");
  // The smallest valid values: 0 processes forked, btime 1.
  EXPECT_EQ(*ParseStatProcesses("processes 0\n"), 0u);
  EXPECT_EQ(*ParseStatBtime("btime 1\n"), 1);
}

TEST(UptimeTest, Parses) {
  auto r = ParseUptime("350735.47 234388.90\n");
  ASSERT_TRUE(r.ok());
  EXPECT_DOUBLE_EQ(*r, 350735.47);
  EXPECT_DOUBLE_EQ(*ParseUptime("0 0\n"), 0);  // the lowest value
  ExpectRefused(ParseUptime("-0.5 0\n").status(),
                "/proc/uptime: expected two non-negative numbers");
  ExpectRefused(ParseUptime("abc def\n").status(),
                "/proc/uptime: expected two non-negative numbers");
  ExpectRefused(ParseUptime("1.0\n").status(),
                "/proc/uptime: expected two non-negative numbers");
  // Words strtod reads as numbers (found by stat_fuzzer).
  for (const char* bad : {"nan 0\n", "inf 0\n", "-nan 1\n", "infinity 2\n"}) {
    ExpectRefused(ParseUptime(bad).status(),
                  "/proc/uptime: expected two non-negative numbers");
  }
}

TEST(SingleIntegerTest, ParsesAndRejects) {
  EXPECT_EQ(*ParseSingleInteger("10\n"), 10);
  EXPECT_EQ(*ParseSingleInteger(" \t-3 \n"), -3);  // trimmed both sides
  EXPECT_EQ(*ParseSingleInteger("0"), 0);
  ExpectRefused(ParseSingleInteger("").status(),
                "integer file: '' is not one integer");
  ExpectRefused(ParseSingleInteger("10 20\n").status(),
                "integer file: '10 20' is not one integer");
  ExpectRefused(ParseSingleInteger("Y\n").status(),
                "integer file: 'Y' is not one integer");
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
  ExpectRefused(ParseMeminfoVmalloc("MemTotal: 1 kB\n").status(),
                "/proc/meminfo: no Vmalloc lines");
  ExpectRefused(ParseMeminfoVmalloc("VmallocUsed: lots kB\n").status(),
                "/proc/meminfo: malformed line 'VmallocUsed: lots kB'");
  ExpectRefused(ParseMeminfoVmalloc("VmallocUsed: 5 MB\n").status(),
                "/proc/meminfo: malformed line 'VmallocUsed: 5 MB'");
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
  ExpectRefused(ParseMounts("proc /proc proc rw 0 0\ntracefs\n").status(),
                "/proc/mounts: malformed line 'tracefs'");
}

// The first tracefs mount unless /sys/kernel/tracing comes later; the first
// debugfs mount.
TEST(MountsTest, WhichMountWins) {
  auto r = ParseMounts(
      "tracefs /a tracefs rw 0 0\n"
      "tracefs /b tracefs rw 0 0\n"
      "debugfs /d1 debugfs rw 0 0\n"
      "debugfs /d2 debugfs rw 0 0\n");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r->tracefs, "/a");
  EXPECT_EQ(*r->debugfs, "/d1");
  r = ParseMounts(
      "tracefs /sys/kernel/tracing tracefs rw 0 0\n"
      "tracefs /b tracefs rw 0 0\n");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r->tracefs, "/sys/kernel/tracing");
}

// Octal escapes \ooo with a first digit 0-3 (one byte); others are kept.
TEST(MountsTest, OctalEscapes) {
  auto r = ParseMounts(
      "tracefs /t\\011x\\134y\\400z\\08 tracefs rw 0 0\n"
      "debugfs /d\\377 debugfs rw 0 0\n");
  ASSERT_TRUE(r.ok()) << r.status();
  // \011 = tab, \134 = backslash; \400 (over 255) and \08 (8 is not
  // octal, and too short) stay as they are.
  EXPECT_EQ(*r->tracefs, "/t\tx\\y\\400z\\08");
  EXPECT_EQ(*r->debugfs, std::string("/d\xff"));
  // An escape cut short at the end of the field stays.
  r = ParseMounts("tracefs /t\\04 tracefs rw 0 0\n");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r->tracefs, "/t\\04");
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

// The kernel applies the last occurrence of a parameter; a bare name gives
// an empty value; quotes are dropped; tabs and newlines separate.
TEST(CmdlineTest, LastOccurrenceWins) {
  EXPECT_EQ(CmdlineParam("preempt=none ro preempt=full", "preempt"), "full");
  EXPECT_EQ(CmdlineParam("preempt=full\tpreempt=none\n", "preempt"), "none");
  EXPECT_EQ(CmdlineParam("preempt=full preempt", "preempt"), "");
  EXPECT_EQ(CmdlineParam("preempt=\"lazy\"", "preempt"), "lazy");
  // After "--" nothing counts, not even a later occurrence.
  EXPECT_EQ(CmdlineParam("preempt=full -- preempt=none", "preempt"), "full");
  EXPECT_FALSE(CmdlineParam("-- preempt=none", "preempt").has_value());
  EXPECT_FALSE(CmdlineParam("", "preempt").has_value());
}

}  // namespace
}  // namespace tracehealth
