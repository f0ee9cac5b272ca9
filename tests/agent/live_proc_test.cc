// The collector on this machine's live /proc and /sys (whatever they hold:
// no root debugfs or tracefs needed). It must not crash, must find the
// thread count and the kernel release, and must give a reason for every
// input it could not read.
#include <sys/utsname.h>

#include <string>

#include "absl/strings/ascii.h"
#include "absl/time/clock.h"
#include "agent/collect/collector.h"
#include "agent/collect/host_fs.h"
#include "agent/report/report_text.h"
#include "common/models/evaluate.h"
#include "gtest/gtest.h"
#include "tests/util/subprocess.h"

namespace tracehealth::testing {
namespace {

TEST(LiveProcTest, CollectsThisHost) {
  agent::HostFs fs("/");
  agent::CollectorOptions o;
  o.state_dir = NewTempDir("live-state-");
  agent::Collector c(&fs, o, [] { return absl::Now(); });
  for (int cycle = 0; cycle < 3; ++cycle) {
    v1::HostSnapshot s = c.Collect();
    struct utsname u;
    ASSERT_EQ(uname(&u), 0);
    ASSERT_TRUE(s.kernel().has_release());
    EXPECT_EQ(s.kernel().release(), u.release);
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

}  // namespace
}  // namespace tracehealth::testing
