// A collection cycle's cost must not grow with the number of threads: one
// cycle opens the same files on a host with 100 threads and on one with
// 100,000 (with a /proc/PID/task entry per thread, as on a real host).
#include <sys/stat.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "agent/collect/collector.h"
#include "agent/collect/host_fs.h"
#include "gtest/gtest.h"
#include "tests/agent/fixture_util.h"

namespace tracehealth::testing {
namespace {

struct Opens {
  uint64_t first = 0;   // first cycle (also reads the once-per-boot inputs)
  uint64_t steady = 0;  // a later cycle
  uint64_t threads = 0;
};

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
  agent::HostFs fs(root);
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
  std::cout << "opens: first cycle " << small.first << ", steady cycle "
            << small.steady << "\n";
}

}  // namespace
}  // namespace tracehealth::testing
