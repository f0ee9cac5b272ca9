// --max_connection_age: the server tells a connection to go away after the
// age (gRPC adds +-10% jitter) and closes it after the grace, so a stream
// pinned to one replica behind an L4 balancer ends and its agent connects
// again, possibly to another replica. The real agent (which holds a
// connection between reports, a stream only while it sends) goes on through
// it on new connections, every report stored once.
#include <signal.h>

#include <filesystem>
#include <set>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/tracehealth/v1/ingest.grpc.pb.h"
#include "tests/reliability/ingest_client.h"
#include "tests/reliability/processes.h"
#include "tests/util/subprocess.h"
#include "tools/loadgen/sample_report.h"

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
  // The agent's sockets (socket:[inode] links in /proc/PID/fd), sampled
  // every 100 ms: each connection is a socket of its own.
  std::set<std::string> sockets;
  for (absl::Time end = absl::Now() + absl::Seconds(7); absl::Now() < end;) {
    std::error_code ec;
    for (auto it = std::filesystem::directory_iterator(
             absl::StrCat("/proc/", (*agent)->pid(), "/fd"), ec);
         !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
      std::error_code rec;
      const std::string target =
          std::filesystem::read_symlink(it->path(), rec).string();
      if (!rec && absl::StartsWith(target, "socket:")) sockets.insert(target);
    }
    absl::SleepFor(absl::Milliseconds(100));
  }
  ASSERT_TRUE((*agent)->Signal(SIGTERM).ok());
  ASSERT_TRUE((*agent)->Wait(absl::Seconds(30)).ok());
  auto log = ReadFile(logs + "/agent.log");
  ASSERT_TRUE(log.ok());
  // Connections of 0.9 to 1.1 s and 1 s of grace over 7 s: at least three
  // connections, besides the agent's other sockets (its gate), which stay.
  std::printf("the agent had %zu sockets in 7 s\n", sockets.size());
  EXPECT_GE(sockets.size(), 4u) << *log;
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
