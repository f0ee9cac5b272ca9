// One server per data directory and per gRPC port, against the real
// tracehealth-server binary: a second server on the same --data_dir, or on
// the --listen port of a running one, exits at start with a message saying
// why, and the first keeps serving and storing each report once.
#include <signal.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/tracehealth/v1/ingest.grpc.pb.h"
#include "tests/reliability/ingest_client.h"
#include "tests/reliability/processes.h"
#include "tests/util/subprocess.h"
#include "tools/loadgen/sample_report.h"

namespace tracehealth::testing {
namespace {

v1::HostReport Report(uint64_t seq) {
  server::SampleHost host = server::FleetHost(2);
  host.host_id = "only-once";
  return server::SampleReport(host, seq, absl::Now());
}

struct Refused {
  int exit_code = -1;
  std::string log;
};

// Runs a server that must not start: it exits within 30 s (else it is
// killed and exit_code is -1).
Refused RunSecondServer(const std::string& data_dir,
                        const std::string& listen) {
  const std::string log = NewTempDir("second") + "/server.log";
  auto p = Subprocess::Start(
      {Runfile("server/tracehealth-server"), "--listen=" + listen,
       "--metrics_listen=127.0.0.1:0", "--data_dir=" + data_dir},
      log);
  Refused r;
  EXPECT_TRUE(p.ok()) << p.status();
  if (!p.ok()) return r;
  absl::StatusOr<int> rc = (*p)->Wait(absl::Seconds(30));
  if (rc.ok()) r.exit_code = *rc;
  auto text = ReadFile(log);
  if (text.ok()) r.log = *text;
  return r;  // a server still running is killed by ~Subprocess
}

// Sends seqs 1..3 twice (the second time as an agent's replay) to `address`.
void SendTwice(const std::string& address) {
  auto stub = v1::TelemetryIngest::NewStub(
      grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  for (int pass = 0; pass < 2; ++pass) {
    ReportStream s(stub.get());
    for (uint64_t seq = 1; seq <= 3; ++seq) ASSERT_TRUE(s.Send(Report(seq)));
    EXPECT_TRUE(s.WaitAcked(3));
    grpc::Status st = s.Finish();
    EXPECT_TRUE(st.ok()) << st.error_message();
  }
}

void Stop(ServerRun& run) {
  ASSERT_TRUE(run.process->Signal(SIGTERM).ok());
  auto rc = run.process->Wait(absl::Seconds(30));
  ASSERT_TRUE(rc.ok()) << rc.status();
  EXPECT_EQ(*rc, 0);
}

TEST(ExclusiveStartTest, SecondServerOnTheSameDataDirExitsNamingTheFirst) {
  const std::string data = NewTempDir("shared-data");
  const std::string logs = NewTempDir("shared-logs");
  auto first = StartServerAt(data, "127.0.0.1:0", logs + "/first.log");
  ASSERT_TRUE(first.ok()) << first.status();

  Refused second = RunSecondServer(data, "127.0.0.1:0");
  EXPECT_EQ(second.exit_code, 1) << second.log;
  EXPECT_TRUE(absl::StrContains(
      second.log, absl::StrCat("data directory ", data,
                               " is in use by another tracehealth-server (pid ",
                               first->process->pid(), ", holding ", data,
                               "/tracehealth.lock)")))
      << second.log;

  // The first still serves; its replay is stored once.
  SendTwice(first->grpc_address);
  auto seqs = StoredSeqs(data + "/tracehealth.db", "only-once");
  ASSERT_TRUE(seqs.ok()) << seqs.status();
  EXPECT_EQ(*seqs, (std::vector<uint64_t>{1, 2, 3}));

  // kill -9 drops the lock with the process: a new server starts.
  first->process->Kill();
  auto again = StartServerAt(data, "127.0.0.1:0", logs + "/again.log");
  ASSERT_TRUE(again.ok()) << again.status();
  Stop(*again);
}

TEST(ExclusiveStartTest, SecondServerOnATakenPortExits) {
  const std::string logs = NewTempDir("port-logs");
  const std::string data = NewTempDir("port-data");
  auto first = StartServerAt(data, "127.0.0.1:0", logs + "/first.log");
  ASSERT_TRUE(first.ok()) << first.status();
  const std::string address = first->grpc_address;

  Refused second = RunSecondServer(NewTempDir("other-data"), address);
  EXPECT_EQ(second.exit_code, 1) << second.log;
  EXPECT_TRUE(absl::StrContains(
      second.log, absl::StrCat("cannot listen on ", address, " (--listen): ",
                               address, ": Address already in use")))
      << second.log;

  // Every stream still reaches the first server.
  SendTwice(address);
  auto seqs = StoredSeqs(data + "/tracehealth.db", "only-once");
  ASSERT_TRUE(seqs.ok()) << seqs.status();
  EXPECT_EQ(*seqs, (std::vector<uint64_t>{1, 2, 3}));
  Stop(*first);
}

}  // namespace
}  // namespace tracehealth::testing
