// --max_connection_age: the server tells a connection to go away after the
// age (gRPC adds +-10% jitter) and closes it after the grace, so a stream
// pinned to one replica behind an L4 balancer ends and its agent connects
// again, possibly to another replica. The real agent goes on through it,
// every report stored once.
#include <signal.h>

#include <string>

#include "absl/strings/str_split.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/tracehealth/v1/ingest.grpc.pb.h"
#include "tests/reliability/ingest_client.h"
#include "tests/reliability/processes.h"
#include "tests/util/sample_report.h"
#include "tests/util/subprocess.h"

namespace tracehealth::testing {
namespace {

// How long an idle stream to `address` (after one acked report) stays open,
// at most `limit`.
absl::Duration IdleStreamLifetime(const std::string& address,
                                  absl::Duration limit) {
  auto channel =
      grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
  auto stub = v1::TelemetryIngest::NewStub(channel);
  ReportStream stream(stub.get());
  const absl::Time opened = absl::Now();
  server::SampleHost host = server::FleetHost(3);
  host.host_id = "idle";
  EXPECT_TRUE(stream.Send(server::SampleReport(host, 1, absl::Now())));
  EXPECT_TRUE(stream.WaitAcked(1));
  stream.WaitClosed(limit);
  return absl::Now() - opened;
}

TEST(ConnectionAgeTest, StreamsAreToldToGoAwayAndTheAgentReconnects) {
  const std::string data = NewTempDir("age-data");
  // Age 1 s (0.9 .. 1.1 s with jitter), then 1 s of grace.
  auto server = StartServerAt(
      data, "127.0.0.1:0", data + "/server.log",
      {"--max_connection_age=1s", "--max_connection_age_grace=1s"});
  ASSERT_TRUE(server.ok()) << server.status();
  const absl::Duration lifetime =
      IdleStreamLifetime(server->grpc_address, absl::Seconds(10));
  std::printf("an idle stream lived %s (age 1s +-10%%, grace 1s)\n",
              absl::FormatDuration(lifetime).c_str());
  EXPECT_GE(lifetime, absl::Milliseconds(900));
  EXPECT_LE(lifetime, absl::Milliseconds(2100) + absl::Milliseconds(900));

  const std::string logs = NewTempDir("age-agent");
  auto agent =
      StartAgent("kprobe-multi-6.14", server->grpc_address, logs + "/state",
                 "aging", absl::Milliseconds(100), logs + "/agent.log");
  ASSERT_TRUE(agent.ok()) << agent.status();
  absl::SleepFor(absl::Seconds(7));
  ASSERT_TRUE((*agent)->Signal(SIGTERM).ok());
  ASSERT_TRUE((*agent)->Wait(absl::Seconds(30)).ok());
  auto log = ReadFile(logs + "/agent.log");
  ASSERT_TRUE(log.ok());
  // Every stream end is logged (its ack cleared the last error).
  int ends = 0;
  for (absl::string_view line : absl::StrSplit(*log, '\n')) {
    if (absl::StrContains(line, "ended:")) ++ends;
  }
  std::printf("the agent's streams ended %d times in 7 s\n", ends);
  EXPECT_GE(ends, 2) << *log;
  auto seqs = StoredSeqs(data + "/tracehealth.db", "aging");
  ASSERT_TRUE(seqs.ok()) << seqs.status();
  ASSERT_GT(seqs->size(), 30u);  // ~70 reports at 100 ms
  EXPECT_EQ(CheckContiguous(*seqs, 1, seqs->back()), "");
  ASSERT_TRUE(server->process->Signal(SIGTERM).ok());
  ASSERT_TRUE(server->process->Wait(absl::Seconds(30)).ok());
}

TEST(ConnectionAgeTest, WithoutAnAgeAnIdleStreamStays) {
  const std::string data = NewTempDir("age-off");
  auto server = StartServerAt(data, "127.0.0.1:0", data + "/server.log");
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_GE(IdleStreamLifetime(server->grpc_address, absl::Seconds(4)),
            absl::Seconds(4));
}

}  // namespace
}  // namespace tracehealth::testing
