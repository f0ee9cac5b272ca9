#include "tests/util/subprocess.h"

#include <signal.h>

#include "gtest/gtest.h"

namespace tracehealth::testing {
namespace {

TEST(SubprocessTest, ReportsExitCodeAndSignals) {
  auto ok = Subprocess::Start({"/bin/sh", "-c", "exit 3"});
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*(*ok)->Wait(absl::Seconds(10)), 3);

  auto sleeper = Subprocess::Start({"/bin/sleep", "30"});
  ASSERT_TRUE(sleeper.ok());
  EXPECT_TRUE(absl::IsDeadlineExceeded(
      (*sleeper)->Wait(absl::Milliseconds(50)).status()));
  ASSERT_TRUE((*sleeper)->Signal(SIGTERM).ok());
  EXPECT_EQ(*(*sleeper)->Wait(absl::Seconds(10)), 128 + SIGTERM);
}

TEST(SubprocessTest, WaitsForReadyFileAndLogs) {
  std::string dir = NewTempDir("sub");
  std::string ready = dir + "/ready";
  std::string log = dir + "/log";
  auto p = Subprocess::Start(
      {"/bin/sh", "-c", "echo hello; sleep 0.2; echo port=1 > \"$READY\""}, log,
      {{"READY", ready}});
  ASSERT_TRUE(p.ok());
  absl::StatusOr<std::string> content = WaitForFile(ready, absl::Seconds(10));
  ASSERT_TRUE(content.ok()) << content.status();
  EXPECT_EQ(*content, "port=1\n");
  EXPECT_EQ(*(*p)->Wait(absl::Seconds(10)), 0);
  EXPECT_EQ(*ReadFile(log), "hello\n");
  EXPECT_TRUE(absl::IsDeadlineExceeded(
      WaitForFile(dir + "/never", absl::Milliseconds(100)).status()));
}

}  // namespace
}  // namespace tracehealth::testing
