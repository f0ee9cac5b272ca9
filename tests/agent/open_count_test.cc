// A collection cycle's cost must not grow with the number of threads: one
// cycle opens the same files, and makes the same system calls, on a host with
// 100 threads and on one with 100,000 (with a /proc/PID/task entry per
// thread, as on a real host). /proc/vmallocinfo, which has a line per thread
// stack, is read only where the vmap purge model needs it, rarely and in few
// read() calls.
#include <sys/stat.h>

#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "agent/collect/collector.h"
#include "agent/testing/generated_host.h"
#include "common/procfs/host_fs.h"
#include "gtest/gtest.h"
#include "tests/agent/fixture_util.h"

namespace tracehealth::testing {
namespace {

struct Opens {
  uint64_t first = 0;   // first cycle (also reads the once-per-boot inputs)
  uint64_t steady = 0;  // a later cycle
  uint64_t threads = 0;
  IoCost steady_cost;  // the later cycle's system calls and bytes
};

IoCost Sum(const InputCosts& costs) {
  IoCost sum;
  for (const auto& [input, cost] : costs) sum += cost;
  return sum;
}

// A copy of the 240k fixture rewritten to `threads` threads, all of them
// tasks of one process with a /proc/PID/task/TID directory each.
std::string HostWithThreads(uint64_t threads) {
  std::string root = CopyFixture("preempt-none-6.16-240k");
  EXPECT_TRUE(WriteFile(root + "/proc/loadavg",
                        absl::StrCat("0.10 0.20 0.30 2/", threads, " 4321\n"))
                  .ok());
  auto stat = ReadFile(root + "/proc/stat");
  std::string s = *stat;
  size_t p = s.find("processes ");
  size_t e = s.find('\n', p);
  s.replace(p, e - p, absl::StrCat("processes ", threads + 5000));
  EXPECT_TRUE(WriteFile(root + "/proc/stat", s).ok());
  std::string task = root + "/proc/812/task";
  mkdir(task.c_str(), 0755);
  for (uint64_t t = 0; t < threads; ++t) {
    mkdir(absl::StrCat(task, "/", 812 + t).c_str(), 0755);
  }
  return root;
}

Opens Measure(uint64_t threads) {
  std::string root = HostWithThreads(threads);
  HostFs fs(root);
  agent::CollectorOptions o;
  absl::Time now = absl::FromUnixSeconds(1796000000);
  agent::Collector c(&fs, o, [&] { return now; });
  Opens out;
  v1::HostSnapshot s = c.Collect();
  out.first = fs.opens();
  out.threads = s.threads().total();
  now += absl::Seconds(15);
  uint64_t before = fs.opens();
  c.Collect();
  out.steady = fs.opens() - before;
  out.steady_cost = Sum(c.cycle_costs());
  return out;
}

TEST(OpenCountTest, SameOpensFor100And100000Threads) {
  Opens small = Measure(100);
  Opens big = Measure(100000);
  EXPECT_EQ(small.threads, 100u);
  EXPECT_EQ(big.threads, 100000u);
  EXPECT_EQ(small.first, big.first);
  EXPECT_EQ(small.steady, big.steady);
  // The slow inputs (config, cpuinfo, fdinfo scan, function lists) are not
  // re-read every cycle.
  EXPECT_LT(small.steady, small.first);
  EXPECT_GT(small.steady, 10u);
  EXPECT_EQ(small.steady_cost.syscalls, big.steady_cost.syscalls);
  EXPECT_EQ(small.steady_cost.read_calls, big.steady_cost.read_calls);
  // The same files; loadavg says "2/100000" instead of "2/100" and stat
  // "processes 105000" instead of "processes 5100": 3 + 2 bytes more.
  EXPECT_EQ(big.steady_cost.bytes, small.steady_cost.bytes + 5);
  std::cout << "opens: first cycle " << small.first << ", steady cycle "
            << small.steady << "\n";
}

// What /proc/vmallocinfo cost in the collector's last cycle.
IoCost VmallocinfoCost(const agent::Collector& c) {
  for (const auto& [input, cost] : c.cycle_costs()) {
    if (input == "/proc/vmallocinfo") return cost;
  }
  return IoCost();
}

// Why input `input` is not applicable, or "" when it is.
std::string NotApplicableReason(const v1::HostSnapshot& s,
                                const std::string& input) {
  for (const v1::NotApplicableInput& n : s.not_applicable()) {
    if (n.input() == input) return n.reason().empty() ? "?" : n.reason();
  }
  return "";
}

// 400,000 threads: a vmallocinfo of 402,000 lines (2,000 other areas and a
// stack per thread, about 41 MB).
TEST(OpenCountTest, VmallocinfoOf400kThreadsOnlyWhereTheModelNeedsIt) {
  const std::string root = NewTempDir("vmalloc400k-") + "/root";
  agent::GeneratedHost host;
  host.threads = 400000;
  host.threads_per_process = 1000;
  host.task_dirs = false;
  absl::Status written = agent::WriteGeneratedHost(root, host);
  ASSERT_TRUE(written.ok()) << written;
  struct stat st;
  ASSERT_EQ(stat((root + "/proc/vmallocinfo").c_str(), &st), 0);
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  // 400,000 stack lines of 103 bytes, and the other areas.
  ASSERT_GT(size, 400000u * 103);

  // Where the purge model does not apply it is never read, not on the first
  // cycle nor on the rare one: KASAN off; KASAN on without vmalloc shadow;
  // and no kernel config at all (KASAN_VMALLOC unknown).
  std::string config_path;
  for (const auto& e : std::filesystem::directory_iterator(root + "/boot")) {
    config_path = e.path().string();
  }
  const absl::StatusOr<std::string> kasan_off = ReadFile(config_path);
  ASSERT_TRUE(kasan_off.ok()) << kasan_off.status();
  const std::string kOff = "# CONFIG_KASAN is not set\n";
  const size_t at = kasan_off->find(kOff);
  ASSERT_NE(at, std::string::npos);
  std::string kasan_no_vmalloc = *kasan_off;
  kasan_no_vmalloc.replace(at, kOff.size(),
                           "CONFIG_KASAN=y\nCONFIG_KASAN_GENERIC=y\n"
                           "# CONFIG_KASAN_VMALLOC is not set\n");
  struct Case {
    const char* name;
    const std::string* config;  // nullptr: no config file
  };
  for (const Case& k : {Case{"KASAN off", &*kasan_off},
                        Case{"KASAN without vmalloc", &kasan_no_vmalloc},
                        Case{"no config", nullptr}}) {
    SCOPED_TRACE(k.name);
    if (k.config != nullptr) {
      ASSERT_TRUE(WriteFile(config_path, *k.config).ok());
    } else {
      ASSERT_TRUE(std::filesystem::remove(config_path));
    }
    HostFs fs(root);
    absl::Time now = absl::FromUnixSeconds(1796000000);
    agent::Collector c(&fs, agent::CollectorOptions(), [&] { return now; });
    for (absl::Duration step :
         {absl::ZeroDuration(), absl::Seconds(15), absl::Minutes(10)}) {
      now += step;
      v1::HostSnapshot s = c.Collect();
      EXPECT_EQ(VmallocinfoCost(c).bytes, 0u);
      EXPECT_EQ(VmallocinfoCost(c).syscalls, 0u);
      EXPECT_FALSE(s.vmalloc().has_areas());
      if (k.config != nullptr) {
        EXPECT_TRUE(s.kernel().has_config_kasan_vmalloc());
        EXPECT_FALSE(s.kernel().config_kasan_vmalloc());
        EXPECT_NE(NotApplicableReason(s, "vmalloc.unpurged_areas")
                      .find("CONFIG_KASAN_VMALLOC is off"),
                  std::string::npos);
      } else {
        EXPECT_FALSE(s.kernel().has_config_kasan_vmalloc());
        EXPECT_NE(UnknownReason(s, "vmalloc.unpurged_areas")
                      .find("/proc/vmallocinfo not read"),
                  std::string::npos);
      }
    }
  }

  // KASAN_VMALLOC: read on the first cycle and every 10 minutes, not in
  // between.
  ASSERT_TRUE(agent::WriteGeneratedConfig(root, true).ok());
  HostFs fs(root);
  absl::Time now = absl::FromUnixSeconds(1796000000);
  agent::Collector c(&fs, agent::CollectorOptions(), [&] { return now; });
  v1::HostSnapshot s = c.Collect();
  EXPECT_EQ(s.vmalloc().areas(), 402000u);
  EXPECT_EQ(s.vmalloc().unpurged_areas(), 20u);  // 1 in 100 other areas
  IoCost first = VmallocinfoCost(c);
  EXPECT_EQ(first.bytes, size);
  // The buffer starts at 64 KiB and doubles while reads fill it: 64 KiB ..
  // 2 MiB in 6 reads (4,128,768 bytes), then 4 MiB reads, then the empty
  // read at the end. (In 64 KiB reads: size / 65,536 + 1, over 600.)
  const uint64_t kMiB4 = 4 << 20;
  const uint64_t after_six =
      65536 + 131072 + 262144 + 524288 + 1048576 + 2097152;
  EXPECT_EQ(first.read_calls, 6 + (size - after_six + kMiB4 - 1) / kMiB4 + 1);
  EXPECT_EQ(first.opens, 1u);
  EXPECT_EQ(first.syscalls, first.read_calls + 2);  // open and close

  // Not at 15 s nor at 9 min 59 s; the counts of the first read stand, with
  // the time they were read.
  for (absl::Duration at :
       {absl::Seconds(15), absl::Minutes(10) - absl::Seconds(1)}) {
    now = absl::FromUnixSeconds(1796000000) + at;
    s = c.Collect();
    EXPECT_EQ(VmallocinfoCost(c).syscalls, 0u);
    EXPECT_EQ(s.vmalloc().areas(), 402000u);
    EXPECT_EQ(s.vmalloc().vmallocinfo_read_at().seconds(), 1796000000);
  }
  now = absl::FromUnixSeconds(1796000000) + absl::Minutes(10);
  s = c.Collect();
  EXPECT_EQ(s.vmalloc().vmallocinfo_read_at().seconds(), 1796000000 + 600);
  // Now the buffer starts as large as the last read, at most 4 MiB: about
  // 41 MB / 4 MiB = 10 reads, and the empty one.
  const IoCost rare = VmallocinfoCost(c);
  EXPECT_EQ(rare.bytes, size);
  EXPECT_EQ(rare.read_calls, (size + kMiB4 - 1) / kMiB4 + 1);
  EXPECT_LE(rare.read_calls, 11u);
  EXPECT_EQ(s.vmalloc().areas(), 402000u);

  // --vmallocinfo_interval=1m: read again at 60 s, not at 59 s.
  agent::CollectorOptions every_minute;
  every_minute.vmallocinfo_interval = absl::Minutes(1);
  now = absl::FromUnixSeconds(1796000000);
  agent::Collector m(&fs, every_minute, [&] { return now; });
  m.Collect();
  EXPECT_EQ(VmallocinfoCost(m).bytes, size);
  now += absl::Seconds(59);
  m.Collect();
  EXPECT_EQ(VmallocinfoCost(m).syscalls, 0u);
  now += absl::Seconds(1);
  m.Collect();
  EXPECT_EQ(VmallocinfoCost(m).bytes, size);
  std::cout << "vmallocinfo " << size << " bytes: first read "
            << first.read_calls << " read() calls, later reads "
            << rare.read_calls << "\n";
}

}  // namespace
}  // namespace tracehealth::testing
