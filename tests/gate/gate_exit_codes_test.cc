// tracehealthctl gate on fixture hosts, answered in-process and by a real
// tracehealth-agent serving its gate socket: one host safe, one over the
// budget with a lockup risk, one unknown; usage errors; a malformed request
// sent to the agent.
#include <chrono>
#include <string>

#include "absl/strings/match.h"
#include "agent/gate/unix_socket.h"
#include "google/protobuf/util/json_util.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/tracehealth/v1/gate.grpc.pb.h"
#include "tests/agent/fixture_util.h"
#include "tests/gate/gate_test_util.h"

namespace tracehealth::testing {
namespace {

// preempt-none-6.16-240k: 240,000 threads, none with a shadow stack, 2,000
// traceable functions; B = 32 gives 7,500 passes,
// V = 32 * 7499 * 7500 / 2 + 7499 + 240000 = 900,127,499 visits,
// 88.7 ns * V + 2 us * 7500 + 20 ns * 240000 = 79.861 s of walk, 2 ms of
// patching: 79.86 s, 3.99x the 20 s soft-lockup threshold (PREEMPT_NONE).
constexpr char kLockup[] =
    "unsafe: function_graph attach walks 240000 threads: 79.86 s > 2.00 s "
    "budget; soft lockup (PREEMPT_NONE, 3.99x the 20.00 s threshold)";
// fgraph-active-6.19: function_graph already runs in instance "foo": no
// shadow-stack walk, but a second user's init_task_vars() visits all 50,000
// threads once (/proc/loadavg); a static PREEMPT_LAZY build, c_visit
// 88.7 ns: 88.7 ns * 50000 + 2 us = 4.437 ms, + 2,000 sites patched at 1 us
// = 6.437 ms.
constexpr char kSafe[] =
    "safe: function_graph attach finds fgraph already active: no "
    "shadow-stack walk, one pass over 50000 threads (init_task_vars, forks "
    "and exits wait): 6.4 ms <= 2.00 s budget";
// no-tracefs: the filter cannot be counted.
constexpr char kUnknown[] =
    "unknown: kprobe_multi_return: filter 'vfs_*' cannot be counted: tracefs "
    "is not mounted";

class GateExitCodesTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = NewTempDir("gate-"); }
  CtlResult Run(const std::vector<std::string>& args) {
    return Gate(args, dir_);
  }
  std::string dir_;
};

TEST_F(GateExitCodesTest, InProcessOnFixtureHosts) {
  const std::string lockup = FixtureRoot("preempt-none-6.16-240k");
  CtlResult r =
      Run({"--root=" + lockup, "--probe=function_graph", "--max_latency=2s"});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_EQ(r.out,
            absl::StrCat(kLockup, " [in-process (root ", lockup, ")]\n"));
  // Mitigations on stderr, the one that fits the budget first.
  EXPECT_TRUE(absl::StartsWith(
      r.err, "  mitigation: warm the shadow stacks in a quiet moment"))
      << r.err;
  EXPECT_TRUE(absl::StrContains(r.err,
                                "holds 937.5 MiB (240000 threads x "
                                "4096 B"))
      << r.err;

  const std::string active = FixtureRoot("fgraph-active-6.19");
  r = Run({"--root=" + active, "--probe=function_graph", "--max_latency=2s"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, absl::StrCat(kSafe, " [in-process (root ", active, ")]\n"));
  EXPECT_EQ(r.err, "");  // safe: no mitigations

  const std::string none = FixtureRoot("no-tracefs");
  r = Run({"--root=" + none, "--probe=kprobe_multi_return", "--filter=vfs_*",
           "--max_latency=2s"});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(r.out, absl::StrCat(kUnknown, " [in-process (root ", none, ")]\n"));

  // Budget boundary on the safe host: 6.437 ms (one pass and patching).
  r = Run({"--root=" + active, "--probe=function_graph", "--max_latency=1ms"});
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_TRUE(absl::StartsWith(r.out,
                               "unsafe: function_graph attach finds "
                               "fgraph already active: no shadow-stack walk, "
                               "one pass over 50000 threads (init_task_vars, "
                               "forks and exits wait): 6.4 ms > 1.0 ms "
                               "budget ["))
      << r.out;
  r = Run(
      {"--root=" + active, "--probe=function_graph", "--max_latency=6.43ms"});
  EXPECT_EQ(r.code, 1) << r.out;
  r = Run(
      {"--root=" + active, "--probe=function_graph", "--max_latency=6.44ms"});
  EXPECT_EQ(r.code, 0) << r.out;
}

TEST_F(GateExitCodesTest, UsageErrorsExit3) {
  CtlResult r = Run({"--probe=function_graph"});
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.err,
            "tracehealthctl gate: --max_latency is required (e.g. "
            "--max_latency=2s)\n");
  EXPECT_EQ(r.out, "");
  r = Run({"--probe=kprobe", "--max_latency=2s"});
  EXPECT_EQ(r.code, 3);
  r = Run({"--probe=fentry", "--max_latency=2s", "--filter=!vfs_read"});
  EXPECT_EQ(r.code, 3);
  EXPECT_TRUE(
      absl::StartsWith(r.err, "tracehealthctl gate: filter: only '!' patterns"))
      << r.err;
  r = Run({"--probe=fentry", "--max_latency=2h"});
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.err, "tracehealthctl gate: max_latency: at most 3600 s\n");
  r = Run({"--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_TRUE(absl::StartsWith(r.out, "usage: tracehealthctl gate")) << r.out;
}

TEST_F(GateExitCodesTest, AnsweredByARunningAgent) {
  struct Case {
    const char* fixture;
    std::vector<std::string> args;
    int code;
    const char* line;
  } cases[] = {
      {"preempt-none-6.16-240k", {"--probe=function_graph"}, 1, kLockup},
      {"fgraph-active-6.19", {"--probe=function_graph"}, 0, kSafe},
      {"no-tracefs",
       {"--probe=kprobe_multi_return", "--filter=vfs_*"},
       2,
       kUnknown},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.fixture);
    const std::string dir = NewTempDir(std::string(c.fixture) + "-");
    // A socket path longer than sun_path: reached through its directory.
    const std::string socket = dir + "/gate.sock";
    GateAgent agent(FixtureRoot(c.fixture), socket, dir);
    ASSERT_TRUE(agent.WaitUntilServing()) << agent.Log();
    std::vector<std::string> args = c.args;
    args.push_back("--max_latency=2s");
    args.push_back("--socket=" + socket);
    CtlResult r = Gate(args, dir);
    EXPECT_EQ(r.code, c.code) << r.err;
    EXPECT_EQ(r.out, absl::StrCat(c.line, " [agent unix:", socket, "]\n"));
  }
}

TEST_F(GateExitCodesTest, JsonFromTheAgent) {
  const std::string dir = NewTempDir("json-");
  const std::string socket = dir + "/gate.sock";
  GateAgent agent(FixtureRoot("preempt-none-6.16-240k"), socket, dir);
  ASSERT_TRUE(agent.WaitUntilServing()) << agent.Log();
  CtlResult r = Gate({"--probe=function_graph", "--max_latency=2s", "--json",
                      "--socket=" + socket},
                     dir);
  EXPECT_EQ(r.code, 1);
  v1::CheckResponse resp;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &resp).ok())
      << r.out;
  EXPECT_EQ(resp.verdict(), v1::ATTACH_VERDICT_STALL_RISK);
  EXPECT_EQ(resp.reason(), kLockup);
  EXPECT_EQ(resp.answered_by(), "agent unix:" + socket);
  EXPECT_EQ(resp.prediction().threads_total(), 240000u);
  EXPECT_EQ(resp.prediction().passes(), 7500u);
  EXPECT_EQ(resp.sites(), 2000u);
  EXPECT_EQ(resp.sites_source(), "default");
  EXPECT_TRUE(resp.has_snapshot_at());
  EXPECT_FALSE(resp.prediction().summary().empty());
  EXPECT_GE(resp.mitigations_size(), 5);
}

TEST_F(GateExitCodesTest, TheAgentRefusesAMalformedRequestNamingTheField) {
  const std::string dir = NewTempDir("bad-");
  const std::string socket = dir + "/gate.sock";
  GateAgent agent(FixtureRoot("fgraph-active-6.19"), socket, dir);
  ASSERT_TRUE(agent.WaitUntilServing()) << agent.Log();
  absl::StatusOr<agent::SocketAddress> addr = agent::SocketAddress::For(socket);
  ASSERT_TRUE(addr.ok());
  auto stub = v1::Gate::NewStub(grpc::CreateChannel(
      addr->grpc_target(), grpc::InsecureChannelCredentials()));
  auto check = [&](const v1::CheckRequest& req) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() +
                     std::chrono::seconds(10));
    v1::CheckResponse resp;
    return stub->Check(&ctx, req, &resp);
  };
  v1::CheckRequest req;
  req.set_probe_kind(v1::PROBE_KIND_FUNCTION_GRAPH_TRACER);
  req.set_functions(0);
  req.mutable_max_latency()->set_seconds(2);
  grpc::Status st = check(req);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(st.error_message(), "functions: must be at least 1");
  req.set_filter("vfs_read:traceoff");
  st = check(req);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(st.error_message(),
            "filter: 'vfs_read:traceoff': only FUNCTION and "
            "FUNCTION:mod:MODULE are counted (no other :command)");
  req.set_functions(5);
  req.mutable_max_latency()->set_nanos(-1);
  st = check(req);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StartsWith(st.error_message(), "max_latency: "));
  // And a good one still works.
  req.mutable_max_latency()->set_nanos(0);
  EXPECT_TRUE(check(req).ok());
}

}  // namespace
}  // namespace tracehealth::testing
