// The real server near its open-file limit (started under prlimit with 400
// descriptors, --http_max_connections=8): idle agents hold a connection and
// no stream, so the descriptors, not the stream limit, bound them. Agents
// connect one by one (a report sent on a stream, acked, the stream closed,
// the connection kept) until one is refused with RESOURCE_EXHAUSTED and a
// message naming the descriptors; the connected ones keep being served on
// new streams over their connections; a real agent refused backs off, and
// gets in once connections go away.
#include <signal.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/tracehealth/v1/ingest.grpc.pb.h"
#include "proto/tracehealth/v1/query.grpc.pb.h"
#include "re2/re2.h"
#include "tests/agent/fixture_util.h"
#include "tests/reliability/ingest_client.h"
#include "tests/server/server_process.h"
#include "tests/util/subprocess.h"
#include "tools/loadgen/sample_report.h"

namespace tracehealth::testing {
namespace {

// 400 open files less the reserve, 2 x 8 HTTP connections + 256 = 272:
// agent connections are admitted while fewer than 400 - 272 = 128
// descriptors are in use.
constexpr int kOpenFiles = 400;
constexpr int kThreshold = kOpenFiles - (2 * 8 + 256);

int OpenDescriptors(int pid) {
  int n = 0;
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator(
           absl::StrCat("/proc/", pid, "/fd"), ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++n;
  }
  return n;
}

bool Eventually(const std::function<bool()>& cond, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    if (cond()) return true;
    absl::SleepFor(absl::Milliseconds(200));
  }
  return cond();
}

// An agent between reports: its own connection, no stream.
struct Agent {
  std::unique_ptr<v1::TelemetryIngest::Stub> stub;
  std::string host;
};

Agent Connect(const std::string& addr, int id) {
  grpc::ChannelArguments args;
  args.SetInt("grpc.channel_id", id);  // a connection of its own
  return {v1::TelemetryIngest::NewStub(grpc::CreateCustomChannel(
              addr, grpc::InsecureChannelCredentials(), args)),
          absl::StrCat("agent-", id)};
}

// Sends report `seq` on a new stream and closes it once acked (the new
// agent behaviour); the status of the stream.
grpc::Status SendOne(const Agent& a, uint64_t seq) {
  ReportStream s(a.stub.get());
  server::SampleHost h;
  h.host_id = a.host;
  (void)s.Send(server::SampleReport(h, seq, absl::Now()));
  (void)s.WaitAcked(seq);
  grpc::Status st = s.Finish();
  if (st.ok() && s.acked() < seq) {
    return grpc::Status(grpc::StatusCode::INTERNAL, "not acked");
  }
  return st;
}

TEST(DescriptorLimitTest, RefusesNewConnectionsNearTheOpenFileLimit) {
  const std::string dir = NewTempDir("fdlimit");
  ServerOptions so;
  so.prefix = {"/usr/bin/prlimit", absl::StrCat("--nofile=", kOpenFiles)};
  so.flags = {"--http_max_connections=8", "--host_report_rate=0"};
  auto sp = StartServerWith(dir, so);
  ASSERT_TRUE(sp.ok()) << sp.status();
  const int pid = sp->process->pid();
  auto query = v1::FleetQuery::NewStub(
      grpc::CreateChannel(sp->grpc_addr, grpc::InsecureChannelCredentials()));
  auto known = [&](const std::string& host) {
    grpc::ClientContext ctx;
    v1::GetHostRequest req;
    req.set_host_id(host);
    v1::HostState st;
    return query->GetHost(&ctx, req, &st).ok();
  };
  EXPECT_FALSE(known("agent-0"));  // connects the query channel
  const int base = OpenDescriptors(pid);
  ASSERT_LT(base, kThreshold - 10) << "the server alone needs " << base;

  std::vector<Agent> agents;
  grpc::Status refused;
  int before_refused = -1;
  for (int i = 0; i < kOpenFiles; ++i) {
    const int before = OpenDescriptors(pid);
    Agent a = Connect(sp->grpc_addr, i);
    grpc::Status st = SendOne(a, 1);
    if (!st.ok()) {
      refused = st;
      before_refused = before;
      break;  // dropping `a` closes its connection, as the agent does
    }
    agents.push_back(std::move(a));
    EXPECT_LE(OpenDescriptors(pid), kThreshold) << i;
  }
  ASSERT_FALSE(refused.ok()) << "no agent refused";
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  int in_use = 0;
  EXPECT_TRUE(RE2::FullMatch(
      refused.error_message(),
      "server near its open-file limit: (\\d+) of 400 descriptors in use, "
      "272 kept for the store, HTTP and queries; retry later",
      &in_use))
      << refused.error_message();
  // Refused at the threshold: the new connection made it 128 or more.
  EXPECT_GE(in_use, kThreshold);
  EXPECT_LE(in_use, kThreshold + 2);
  EXPECT_GE(before_refused, kThreshold - 3);
  // One descriptor per connected agent from the server's own ones up.
  EXPECT_NEAR(static_cast<int>(agents.size()), kThreshold - base, 3);

  // The connected agents keep being served: a new stream each, on their
  // connections (no new descriptor).
  for (size_t i = 0; i < agents.size(); ++i) {
    grpc::Status st = SendOne(agents[i], 2);
    EXPECT_TRUE(st.ok()) << i << ": " << st.error_message();
  }
  // A real agent is refused too, and backs off.
  const std::string root = CopyFixture("kprobe-multi-6.14");
  absl::StatusOr<std::unique_ptr<Subprocess>> agent = Subprocess::Start(
      {Runfile("agent/tracehealth-agent"), "--root=" + root,
       "--state_dir=" + dir + "/agent", "--server=" + sp->grpc_addr,
       "--host_id=late-agent", "--interval=1s"},
      dir + "/agent.log");
  ASSERT_TRUE(agent.ok()) << agent.status();
  auto log = [&] { return ReadFile(dir + "/agent.log").value_or(""); };
  EXPECT_TRUE(Eventually(
      [&] {
        return absl::StrContains(log(),
                                 "RESOURCE_EXHAUSTED: server near its "
                                 "open-file limit: ");
      },
      absl::Seconds(20)))
      << log();
  EXPECT_TRUE(absl::StrContains(log(), "reconnecting with backoff"));
  EXPECT_FALSE(known("late-agent"));
  // Its refused connections are closed: the server stays at the threshold.
  absl::SleepFor(absl::Seconds(1));
  EXPECT_LE(OpenDescriptors(pid), kThreshold + 1);

  // Ten agents leave: new ones are served.
  agents.resize(agents.size() - 10);
  EXPECT_TRUE(
      Eventually([&] { return known("late-agent"); }, absl::Seconds(60)))
      << log();
  Agent late = Connect(sp->grpc_addr, 100000);
  EXPECT_TRUE(
      Eventually([&] { return SendOne(late, 1).ok(); }, absl::Seconds(20)));
  EXPECT_TRUE(known("agent-100000"));

  ASSERT_TRUE((*agent)->Signal(SIGTERM).ok());
  (void)(*agent)->Wait(absl::Seconds(30));
  ASSERT_TRUE(sp->process->Signal(SIGTERM).ok());
  EXPECT_EQ(*sp->process->Wait(absl::Seconds(30)), 0);
}

}  // namespace
}  // namespace tracehealth::testing
