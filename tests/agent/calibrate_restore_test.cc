// `tracehealth-agent --calibrate` as a process on a writable copy of a
// fixture tree: killed (SIGKILL) in the middle of a calibration, with its
// threads up and tracefs changed, the next agent start puts current_tracer
// and set_ftrace_filter back and removes the journal; SIGTERM restores
// before the exit; refusals exit 1 with the reason.
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/agent/fixture_util.h"
#include "tests/util/subprocess.h"

namespace tracehealth::testing {
namespace {

constexpr int kThreads = 64;  // more than the batch (32 on 6.1)

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void Put(const std::string& path, const std::string& content) {
  std::filesystem::permissions(path, std::filesystem::perms::owner_write,
                               std::filesystem::perm_options::add);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
}

// "Threads:" of /proc/PID/status, -1 when unreadable.
int ThreadsOf(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  int n = -1;
  while (std::getline(in, line)) {
    if (line.rfind("Threads:", 0) == 0 &&
        !absl::SimpleAtoi(absl::StripAsciiWhitespace(line.substr(8)), &n)) {
      n = -1;
    }
  }
  return n;
}

class CalibrateRestoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = CopyFixture("preempt-voluntary-dynamic-6.1-128k");
    dir_ = NewTempDir("calibrate-");
    state_ = dir_ + "/state";
    Put(root_ + "/proc/loadavg", "12.31 11.87 11.02 3/400 412328\n");
    Put(Tracing("available_filter_functions"),
        Slurp(Tracing("available_filter_functions")) + "ksys_sync\n");
    Put(Tracing("set_ftrace_filter"), "vfs_read\nvfs_write\n");
    Put(Tracing("current_tracer"), "nop\n");
  }
  std::string Tracing(const std::string& f) const {
    return root_ + "/sys/kernel/tracing/" + f;
  }
  std::string Journal() const { return state_ + "/calibration.journal"; }
  std::unique_ptr<Subprocess> Start(std::vector<std::string> args,
                                    const std::string& log) {
    args.insert(args.begin(),
                {Runfile("agent/tracehealth-agent"), "--root=" + root_,
                 "--state_dir=" + state_, "--host_id=canary-1"});
    auto p = Subprocess::Start(args, dir_ + "/" + log);
    EXPECT_TRUE(p.ok()) << p.status();
    return p.ok() ? std::move(*p) : nullptr;
  }
  int Run(std::vector<std::string> args, const std::string& log) {
    std::unique_ptr<Subprocess> p = Start(std::move(args), log);
    absl::StatusOr<int> rc = p->Wait(absl::Seconds(60));
    EXPECT_TRUE(rc.ok()) << rc.status();
    return rc.ok() ? *rc : -1;
  }
  // Waits until the calibration holds after its first enable: journal on
  // disk, function_graph limited to ksys_sync, and its K threads running.
  void WaitForTheHold(pid_t pid) {
    const absl::Time deadline = absl::Now() + absl::Seconds(30);
    while (absl::Now() < deadline &&
           !(std::filesystem::exists(Journal()) &&
             Slurp(Tracing("current_tracer")) == "function_graph\n" &&
             ThreadsOf(pid) >= kThreads + 1)) {
      absl::SleepFor(absl::Milliseconds(10));
    }
    ASSERT_TRUE(std::filesystem::exists(Journal()));
    ASSERT_EQ(Slurp(Tracing("current_tracer")), "function_graph\n");
    ASSERT_EQ(Slurp(Tracing("set_ftrace_filter")), "ksys_sync\n");
    ASSERT_GE(ThreadsOf(pid), kThreads + 1);
  }
  void ExpectRestored() {
    EXPECT_EQ(Slurp(Tracing("current_tracer")), "nop\n");
    EXPECT_EQ(Slurp(Tracing("set_ftrace_filter")), "vfs_read\nvfs_write\n");
    EXPECT_FALSE(std::filesystem::exists(Journal()));
  }

  std::string root_, dir_, state_;
};

TEST_F(CalibrateRestoreTest, TheNextStartUndoesAKilledCalibration) {
  std::unique_ptr<Subprocess> p =
      Start({"--calibrate", "--calibrate_threads=64",
             "--calibrate_hold_for_test=120s"},
            "calibrate.log");
  ASSERT_NE(p, nullptr);
  WaitForTheHold(p->pid());
  const pid_t pid = p->pid();
  ASSERT_TRUE(p->Signal(SIGKILL).ok());
  absl::StatusOr<int> rc = p->Wait(absl::Seconds(30));
  ASSERT_TRUE(rc.ok()) << rc.status();
  EXPECT_EQ(*rc, 128 + SIGKILL);
  // Killed: nothing was restored.
  EXPECT_EQ(Slurp(Tracing("current_tracer")), "function_graph\n");
  EXPECT_TRUE(std::filesystem::exists(Journal()));

  EXPECT_EQ(Run({"--once"}, "once.log"), 0) << Slurp(dir_ + "/once.log");
  ExpectRestored();
  EXPECT_TRUE(absl::StrContains(
      Slurp(dir_ + "/once.log"),
      "restored current_tracer (nop) and set_ftrace_filter under "
      "/sys/kernel/tracing left by an interrupted calibration (pid " +
          std::to_string(pid) + ")"))
      << Slurp(dir_ + "/once.log");
  // A further start has nothing to undo.
  EXPECT_EQ(Run({"--once"}, "again.log"), 0);
  EXPECT_FALSE(absl::StrContains(Slurp(dir_ + "/again.log"), "restored"));
}

TEST_F(CalibrateRestoreTest, SigtermRestoresBeforeTheExit) {
  std::unique_ptr<Subprocess> p =
      Start({"--calibrate", "--calibrate_threads=64",
             "--calibrate_hold_for_test=120s"},
            "calibrate.log");
  ASSERT_NE(p, nullptr);
  WaitForTheHold(p->pid());
  ASSERT_TRUE(p->Signal(SIGTERM).ok());
  absl::StatusOr<int> rc = p->Wait(absl::Seconds(30));
  ASSERT_TRUE(rc.ok()) << rc.status();
  EXPECT_EQ(*rc, 2);
  EXPECT_TRUE(absl::StrContains(Slurp(dir_ + "/calibrate.log"),
                                "error: interrupted by a signal\n"));
  ExpectRestored();
}

TEST_F(CalibrateRestoreTest, RefusalsExitOneWithTheReason) {
  Put(Tracing("current_tracer"), "function_graph\n");
  EXPECT_EQ(Run({"--calibrate"}, "busy.log"), 1);
  EXPECT_TRUE(absl::StrContains(
      Slurp(dir_ + "/busy.log"),
      "refused: fgraph in use: current_tracer is function_graph, not nop\n"))
      << Slurp(dir_ + "/busy.log");
  Put(Tracing("current_tracer"), "nop\n");
  // 64 threads: the walk over 464 threads is predicted at about 0.38 ms.
  EXPECT_EQ(
      Run({"--calibrate", "--calibrate_threads=64", "--calibrate_budget=1us"},
          "budget.log"),
      1);
  EXPECT_TRUE(absl::StrContains(Slurp(dir_ + "/budget.log"),
                                "refused: prediction over the budget: the "
                                "walk at 464 threads"))
      << Slurp(dir_ + "/budget.log");
  ExpectRestored();
}

}  // namespace
}  // namespace tracehealth::testing
