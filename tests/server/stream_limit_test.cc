// The real server at its agent-stream limit (--max_agent_streams=3): a
// fourth agent is refused at once with RESOURCE_EXHAUSTED and a message
// naming the limit, the three keep being served, a freed slot is taken
// again, and a real agent that was refused backs off and gets in once a
// slot is free, its reports then stored; between its reports it holds no
// slot.
#include <signal.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/tracehealth/v1/ingest.grpc.pb.h"
#include "proto/tracehealth/v1/query.grpc.pb.h"
#include "tests/agent/fixture_util.h"
#include "tests/reliability/ingest_client.h"
#include "tests/server/server_process.h"
#include "tests/util/subprocess.h"
#include "tools/loadgen/sample_report.h"

namespace tracehealth::testing {
namespace {

// One connection per simulated agent, as agents have.
std::unique_ptr<v1::TelemetryIngest::Stub> AgentStub(const std::string& addr,
                                                     int id) {
  grpc::ChannelArguments args;
  args.SetInt("grpc.channel_id", id);
  return v1::TelemetryIngest::NewStub(grpc::CreateCustomChannel(
      addr, grpc::InsecureChannelCredentials(), args));
}

bool Eventually(const std::function<bool()>& cond, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    if (cond()) return true;
    absl::SleepFor(absl::Milliseconds(100));
  }
  return cond();
}

double Metric(const std::string& addr, const std::string& line_prefix) {
  absl::StatusOr<std::string> m = HttpGet(addr, "/metrics");
  if (!m.ok()) return -1;
  size_t at = m->find("\n" + line_prefix + " ");
  if (at == std::string::npos) return -1;
  return std::stod(m->substr(at + line_prefix.size() + 2));
}

TEST(StreamLimitTest, RefusedBeyondTheLimitThenServedWhenASlotFrees) {
  const std::string dir = NewTempDir("limit");
  auto sp = StartServer(dir, {"--max_agent_streams=3"});
  ASSERT_TRUE(sp.ok()) << sp.status();
  std::vector<std::unique_ptr<v1::TelemetryIngest::Stub>> stubs;
  std::vector<std::unique_ptr<ReportStream>> held;
  const absl::Time now = absl::Now();
  for (int i = 0; i < 3; ++i) {
    stubs.push_back(AgentStub(sp->grpc_addr, i));
    held.push_back(std::make_unique<ReportStream>(stubs.back().get()));
    server::SampleHost h;
    h.host_id = absl::StrCat("held-", i);
    ASSERT_TRUE(held.back()->Send(server::SampleReport(h, 1, now)));
    ASSERT_TRUE(held.back()->WaitAcked(1)) << i;
  }
  // The fourth: ended at once, before anything it sends is read.
  stubs.push_back(AgentStub(sp->grpc_addr, 3));
  {
    ReportStream extra(stubs.back().get());
    server::SampleHost h;
    h.host_id = "extra";
    (void)extra.Send(server::SampleReport(h, 1, now));
    EXPECT_TRUE(extra.WaitClosed(absl::Seconds(10)));
    EXPECT_EQ(extra.acked(), 0u);
    grpc::Status st = extra.Finish();
    EXPECT_EQ(st.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
    EXPECT_EQ(st.error_message(),
              "server at its limit of 3 agent streams (--max_agent_streams); "
              "retry later");
  }
  EXPECT_EQ(
      Metric(sp->metrics_addr, "tracehealth_ingest_streams_refused_total"), 1);
  // The three are still served.
  for (int i = 0; i < 3; ++i) {
    server::SampleHost h;
    h.host_id = absl::StrCat("held-", i);
    ASSERT_TRUE(held[i]->Send(server::SampleReport(h, 2, now)));
    EXPECT_TRUE(held[i]->WaitAcked(2)) << i;
  }

  // A real agent is refused too, and backs off (its log says so).
  const std::string root = CopyFixture("kprobe-multi-6.14");
  absl::StatusOr<std::unique_ptr<Subprocess>> agent = Subprocess::Start(
      {Runfile("agent/tracehealth-agent"), "--root=" + root,
       "--state_dir=" + dir + "/agent", "--server=" + sp->grpc_addr,
       "--host_id=late-agent", "--interval=1s"},
      dir + "/agent.log");
  ASSERT_TRUE(agent.ok()) << agent.status();
  EXPECT_TRUE(Eventually(
      [&] {
        return absl::StrContains(ReadFile(dir + "/agent.log").value_or(""),
                                 "RESOURCE_EXHAUSTED: server at its limit of "
                                 "3 agent streams");
      },
      absl::Seconds(20)))
      << ReadFile(dir + "/agent.log").value_or("");
  EXPECT_TRUE(absl::StrContains(ReadFile(dir + "/agent.log").value_or(""),
                                "reconnecting with backoff"));
  // Refused again and again while the server is full, never stored.
  EXPECT_TRUE(Eventually(
      [&] {
        return Metric(sp->metrics_addr,
                      "tracehealth_ingest_streams_refused_total") >= 3;
      },
      absl::Seconds(20)));
  auto query = v1::FleetQuery::NewStub(
      grpc::CreateChannel(sp->grpc_addr, grpc::InsecureChannelCredentials()));
  auto known = [&](const std::string& host) {
    grpc::ClientContext ctx;
    v1::GetHostRequest req;
    req.set_host_id(host);
    v1::HostState st;
    return query->GetHost(&ctx, req, &st).ok();
  };
  EXPECT_FALSE(known("late-agent"));

  // One agent leaves: the waiting agent takes its slot on a retry.
  EXPECT_TRUE(held[0]->Finish().ok());
  held[0].reset();
  EXPECT_TRUE(
      Eventually([&] { return known("late-agent"); }, absl::Seconds(60)))
      << ReadFile(dir + "/agent.log").value_or("");
  // The agent holds its slot only while it sends (its stream closes once
  // acked), so a new stream is served between its reports.
  stubs.push_back(AgentStub(sp->grpc_addr, 4));
  EXPECT_TRUE(Eventually(
      [&] {
        ReportStream another(stubs.back().get());
        server::SampleHost h;
        h.host_id = "another";
        (void)another.Send(server::SampleReport(h, 1, now));
        (void)another.WaitAcked(1);
        return another.Finish().ok() && another.acked() == 1;
      },
      absl::Seconds(20)));
  EXPECT_TRUE(known("another"));

  ASSERT_TRUE((*agent)->Signal(SIGTERM).ok());
  (void)(*agent)->Wait(absl::Seconds(30));
  for (auto& s : held) {
    if (s != nullptr) (void)s->Finish();
  }
  ASSERT_TRUE(sp->process->Signal(SIGTERM).ok());
  EXPECT_EQ(*sp->process->Wait(absl::Seconds(30)), 0);
}

}  // namespace
}  // namespace tracehealth::testing
