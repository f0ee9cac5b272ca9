// The gate socket refuses other users, with a real tracehealth-agent and
// tracehealthctl run as another user (setpriv): the socket's mode keeps
// them from connecting; with the mode opened up, the agent's own check
// (SO_PEERCRED) closes their connection; members of --local_socket_group
// are served. A refused tracehealthctl answers in-process instead and says
// why.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/agent/fixture_util.h"
#include "tests/gate/gate_test_util.h"

namespace tracehealth::testing {
namespace {

namespace fs = std::filesystem;

constexpr char kLine[] =
    "unsafe: function_graph attach walks 240000 threads: 79.86 s > 2.00 s "
    "budget; soft lockup (PREEMPT_NONE, 3.99x the 20.00 s threshold)";

class GateRefusalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(geteuid(), 0u) << "needs root to run as other users";
    // Everything another user needs, under a directory it may traverse:
    // the host tree (for its in-process answer) and tracehealthctl.
    char dir[] = "/tmp/gate-refusal-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
    chmod(dir, 0755);
    root_ = dir_ + "/root";
    fs::copy(FixtureRoot("preempt-none-6.16-240k"), root_,
             fs::copy_options::recursive);
    ctl_ = dir_ + "/tracehealthctl";
    fs::copy_file(CtlBinary(), ctl_);
    chmod(ctl_.c_str(), 0755);
    socket_ = dir_ + "/gate.sock";
    out_ = dir_ + "/out";
    fs::create_directory(out_);
    chmod(out_.c_str(), 0777);
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  // tracehealthctl gate as uid/gid (no supplementary groups), asking the
  // agent, with the copied tree for an in-process answer.
  CtlResult GateAs(uid_t uid, gid_t gid) {
    return RunCaptured({"setpriv", absl::StrCat("--reuid=", uid),
                        absl::StrCat("--regid=", gid), "--clear-groups", ctl_,
                        "gate", "--probe=function_graph", "--max_latency=2s",
                        "--socket=" + socket_, "--root=" + root_},
                       out_);
  }
  std::string InProcess() const {
    return absl::StrCat(kLine, " [in-process (root ", root_, ")]\n");
  }
  std::string ByAgent() const {
    return absl::StrCat(kLine, " [agent unix:", socket_, "]\n");
  }

  std::string dir_, root_, ctl_, socket_, out_;
};

TEST_F(GateRefusalTest, OtherUsersAreRefused) {
  GateAgent agent(root_, socket_, dir_);
  ASSERT_TRUE(agent.WaitUntilServing()) << agent.Log();
  struct stat st;
  ASSERT_EQ(stat(socket_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0660u);

  // Root (the agent's user) is served.
  CtlResult r = GateAs(0, 0);
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_EQ(r.out, ByAgent());

  // nobody cannot connect: mode 0660, group root.
  r = GateAs(65534, 65534);
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_EQ(r.out, InProcess());
  EXPECT_TRUE(absl::StartsWith(
      r.err, "tracehealthctl gate: no agent answered at unix:" + socket_ +
                 " (UNAVAILABLE: "))
      << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "Permission denied")) << r.err;

  // With the mode opened up, the agent closes the connection itself.
  ASSERT_EQ(chmod(socket_.c_str(), 0666), 0);
  r = GateAs(65534, 65534);
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_EQ(r.out, InProcess());
  EXPECT_TRUE(absl::StrContains(r.err, "no agent answered")) << r.err;
  // The agent logs it after its next cycle (1 s).
  const absl::Time end = absl::Now() + absl::Seconds(10);
  while (absl::Now() < end &&
         !absl::StrContains(agent.Log(), "gate: refused uid 65534 gid 65534")) {
    absl::SleepFor(absl::Milliseconds(100));
  }
  EXPECT_TRUE(absl::StrContains(
      agent.Log(), "tracehealth-agent: gate: refused uid 65534 gid 65534 pid "))
      << agent.Log();
}

TEST_F(GateRefusalTest, MembersOfTheSocketGroupAreServed) {
  GateAgent agent(root_, socket_, dir_, {"--local_socket_group=65534"});
  ASSERT_TRUE(agent.WaitUntilServing()) << agent.Log();
  struct stat st;
  ASSERT_EQ(stat(socket_.c_str(), &st), 0);
  EXPECT_EQ(st.st_gid, 65534u);
  // gid 65534 (nogroup) is the socket's group: served by the agent.
  CtlResult r = GateAs(65534, 65534);
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_EQ(r.out, ByAgent());
  // Another user in another group is not.
  r = GateAs(12345, 12345);
  EXPECT_EQ(r.out, InProcess());
  EXPECT_TRUE(absl::StrContains(r.err, "no agent answered")) << r.err;
}

}  // namespace
}  // namespace tracehealth::testing
