// The data-directory lock (one server per SQLite file) is the SQLite
// store's alone: replicas on one PostgreSQL database share it on purpose,
// and an operator who gives them one --data_dir (a shared unit file, say)
// must still get every replica serving. Both replicas run the real
// tracehealth-server binary on a PostgreSQL 15 cluster the test starts.
#include <signal.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/tracehealth/v1/ingest.grpc.pb.h"
#include "tests/reliability/ingest_client.h"
#include "tests/reliability/processes.h"
#include "tests/replicas/replica_env.h"
#include "tests/util/postgres_cluster.h"
#include "tests/util/subprocess.h"
#include "tools/loadgen/sample_report.h"

namespace tracehealth::testing {
namespace {

absl::StatusOr<ServerRun> StartOn(const std::string& dir,
                                  const std::string& dsn,
                                  const std::string& name) {
  return StartServerAt(
      dir, "127.0.0.1:0", absl::StrCat(dir, "/", name, ".log"),
      {"--store=postgres", "--postgres_dsn=" + dsn, "--replica_name=" + name});
}

TEST(SharedDataDirTest, PostgresReplicasGivenOneDataDirBothServe) {
  auto cluster = PostgresCluster::Start();
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  auto dsn = (*cluster)->CreateDatabase();
  ASSERT_TRUE(dsn.ok()) << dsn.status();
  const std::string dir = NewTempDir("shared-data");

  auto a = StartOn(dir, *dsn, "replica-a");
  ASSERT_TRUE(a.ok()) << a.status();
  // With the lock taken for every store this one exited: "in use by pid".
  auto b = StartOn(dir, *dsn, "replica-b");
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_FALSE(ReadFile(dir + "/tracehealth.lock").ok())
      << "a PostgreSQL replica took the SQLite data-directory lock";

  // A report acked by replica a is stored once and listed by replica b.
  auto stub = v1::TelemetryIngest::NewStub(
      grpc::CreateChannel(a->grpc_address, grpc::InsecureChannelCredentials()));
  server::SampleHost host = server::FleetHost(3);
  host.host_id = "shared-dir";
  {
    ReportStream s(stub.get());
    ASSERT_TRUE(s.Send(server::SampleReport(host, 1, absl::Now())));
    ASSERT_TRUE(s.WaitAcked(1));
    s.Finish();
  }
  auto seqs = PgStoredSeqs(*dsn, "shared-dir");
  ASSERT_TRUE(seqs.ok()) << seqs.status();
  EXPECT_EQ(*seqs, std::vector<uint64_t>{1});
  std::vector<std::string> listed;
  for (absl::Time end = absl::Now() + absl::Seconds(10); absl::Now() < end;
       absl::SleepFor(absl::Milliseconds(50))) {
    auto hosts = ListedHosts(b->grpc_address);
    ASSERT_TRUE(hosts.ok()) << hosts.status();
    listed = *hosts;
    if (!listed.empty()) break;
  }
  EXPECT_EQ(listed, std::vector<std::string>{"shared-dir"});

  for (ServerRun* r : {&*a, &*b}) {
    ASSERT_TRUE(r->process->Signal(SIGTERM).ok());
    auto rc = r->process->Wait(absl::Seconds(30));
    ASSERT_TRUE(rc.ok()) << rc.status();
    EXPECT_EQ(*rc, 0);
  }
}

}  // namespace
}  // namespace tracehealth::testing
