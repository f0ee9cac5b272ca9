// The collector on this machine's live /proc and /sys (whatever they hold:
// no root debugfs or tracefs needed). It must not crash, must find the
// thread count and the kernel release, and must give a reason for every
// input it could not read. The same checks run on a copy of a fixture host
// whose files hold values written here, so that a wrong value fails too.
#include <sys/utsname.h>

#include <optional>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/time/clock.h"
#include "agent/collect/collector.h"
#include "agent/report/report_text.h"
#include "common/models/evaluate.h"
#include "common/procfs/host_fs.h"
#include "gtest/gtest.h"
#include "tests/agent/fixture_util.h"
#include "tests/util/subprocess.h"

namespace tracehealth::testing {
namespace {

// What a cycle must have read, when the host's files are known.
struct Known {
  std::string release;
  uint64_t total = 0;
  uint64_t running = 0;
  uint64_t forks = 0;
  double uptime = 0;
  uint32_t online = 0;
  uint32_t possible = 0;
};

// One collection cycle's checks; exact values when `known` is given.
void CheckCycle(const v1::HostSnapshot& s, const std::optional<Known>& known) {
  ASSERT_TRUE(s.kernel().has_release());
  ASSERT_TRUE(s.threads().has_total());
  EXPECT_GT(s.threads().total(), 0u);
  EXPECT_GE(s.threads().total(), s.threads().running());
  EXPECT_TRUE(s.threads().has_forks_since_boot());
  EXPECT_TRUE(s.cpus().has_online());
  EXPECT_GT(s.cpus().online(), 0u);
  for (const v1::UnknownInput& unknown : s.unknown()) {
    EXPECT_FALSE(unknown.input().empty());
    EXPECT_FALSE(unknown.reason().empty()) << unknown.input();
  }
  // N_null is bounded whenever the thread count is known.
  EXPECT_TRUE(s.fgraph().has_null_threads_bound());
  EXPECT_LE(s.fgraph().null_threads_bound(), s.threads().total());
  if (!known) return;
  EXPECT_EQ(s.kernel().release(), known->release);
  EXPECT_EQ(s.threads().total(), known->total);
  EXPECT_EQ(s.threads().running(), known->running);
  EXPECT_EQ(s.threads().forks_since_boot(), known->forks);
  EXPECT_DOUBLE_EQ(s.threads().uptime_seconds(), known->uptime);
  EXPECT_EQ(s.cpus().online(), known->online);
  EXPECT_EQ(s.cpus().possible(), known->possible);
}

TEST(LiveProcTest, CollectsThisHost) {
  HostFs fs("/");
  agent::CollectorOptions o;
  o.state_dir = NewTempDir("live-state-");
  agent::Collector c(&fs, o, [] { return absl::Now(); });
  for (int cycle = 0; cycle < 3; ++cycle) {
    SCOPED_TRACE(cycle);
    v1::HostSnapshot s = c.Collect();
    struct utsname u;
    ASSERT_EQ(uname(&u), 0);
    EXPECT_EQ(s.kernel().release(), u.release);
    CheckCycle(s, std::nullopt);
    v1::Predictions p = EvaluateAll(s);
    EXPECT_EQ(p.attach_size(), 10);
    if (cycle == 0) {
      v1::HostReport r;
      *r.mutable_snapshot() = s;
      *r.mutable_predictions() = p;
      std::cout << agent::RenderReportText(r);
    }
  }
}

// The live test's cycles over a host whose /proc and /sys files say what
// is written here, changed between cycles: every value read is the file's
// value of that cycle.
TEST(LiveProcTest, CollectsKnownValuesFromAFixtureCopy) {
  const std::string root = CopyFixture("preempt-none-6.16-240k");
  auto write = [&](const std::string& path, const std::string& text) {
    ASSERT_TRUE(WriteFile(root + path, text).ok()) << path;
  };
  write("/proc/sys/kernel/osrelease", "6.16.3-test\n");
  write("/sys/devices/system/cpu/online", "0-3,8-11\n");  // 4 + 4 = 8
  write("/sys/devices/system/cpu/possible", "0-15\n");    // 16
  HostFs fs(root);
  agent::CollectorOptions o;
  o.state_dir = NewTempDir("fixture-state-");
  agent::Collector c(&fs, o, [] { return absl::FromUnixSeconds(1796000000); });
  for (int cycle = 0; cycle < 3; ++cycle) {
    SCOPED_TRACE(cycle);
    // 100 + cycle threads, cycle + 1 of them running, forks and uptime
    // growing by 1000 and 30.5 per cycle.
    const uint64_t total = 100 + cycle;
    const uint64_t running = cycle + 1;
    write("/proc/loadavg", "0.10 0.20 0.30 " + std::to_string(running) + "/" +
                               std::to_string(total) + " 4242\n");
    const uint64_t forks = 5000 + 1000 * cycle;
    write("/proc/stat",
          "cpu  1 2 3 4 5 6 7 0 0 0\nbtime 1795900000\n"
          "processes " +
              std::to_string(forks) + "\n");
    const double uptime = 600.25 + 30.5 * cycle;
    write("/proc/uptime", std::to_string(uptime) + " 100.00\n");
    v1::HostSnapshot s = c.Collect();
    CheckCycle(s, Known{"6.16.3-test", total, running, forks, uptime, 8, 16});
  }
}

}  // namespace
}  // namespace tracehealth::testing
