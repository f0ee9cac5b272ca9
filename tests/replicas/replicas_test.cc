// Several tracehealth-server replicas on one PostgreSQL 15 database the test
// starts itself, under load from simulated agents (each given both replica
// addresses, as tracehealth-agent --server=a,b), a real agent and the load
// generator:
// - one replica is killed (SIGKILL) under load: every acked (host, seq) is
//   stored exactly once, the agents carry on with the other replica and its
//   queries see every host; the feed lag between replicas is measured;
// - PostgreSQL itself is killed and restarted under load: the same;
// - a replica with a wrong DSN exits at once, saying why, without
//   listening.
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/tracehealth/v1/query.grpc.pb.h"
#include "tests/reliability/ingest_client.h"
#include "tests/reliability/processes.h"
#include "tests/replicas/replica_env.h"
#include "tests/replicas/sim_agent.h"
#include "tests/util/postgres_cluster.h"
#include "tests/util/subprocess.h"
#include "tools/loadgen/loadgen.h"
#include "tools/loadgen/sample_report.h"

namespace tracehealth::testing {
namespace {

constexpr int kAgents = 60;
constexpr absl::Duration kPeriod = absl::Milliseconds(200);

struct Fleet {
  std::vector<std::unique_ptr<SimAgent>> agents;
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;

  // Half the agents start on each address.
  void Start(const std::vector<std::string>& addresses) {
    for (int i = 0; i < kAgents; ++i) {
      agents.push_back(
          std::make_unique<SimAgent>(addresses, "replica-", i, i, kPeriod));
    }
    for (int i = 0; i < kAgents; ++i) {
      threads.emplace_back([this, i] {
        agents[i]->Run(stop, kPeriod * i / kAgents, absl::Seconds(30));
      });
    }
  }
  void Stop() {
    stop.store(true);
    for (std::thread& t : threads) t.join();
  }
  uint64_t acked() {
    uint64_t n = 0;
    for (auto& a : agents) n += a->acked();
    return n;
  }
};

std::string Count(uint64_t n) { return std::to_string(n); }

// A PostgreSQL cluster of the test's own and two replicas on one database.
struct TwoReplicas {
  absl::StatusOr<std::unique_ptr<PostgresCluster>> cluster;
  absl::StatusOr<std::string> dsn;
  absl::StatusOr<ServerRun> r1, r2;

  void Start() {
    cluster = PostgresCluster::Start();
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    dsn = (*cluster)->CreateDatabase();
    ASSERT_TRUE(dsn.ok()) << dsn.status();
    r1 = StartReplica("replica-a", *dsn);
    ASSERT_TRUE(r1.ok()) << r1.status();
    r2 = StartReplica("replica-b", *dsn);
    ASSERT_TRUE(r2.ok()) << r2.status();
  }
};

void ExpectExactlyOnce(const std::string& dsn, Fleet& fleet,
                       const std::string& what) {
  ExactlyOnce e = CheckExactlyOnce(dsn, fleet.agents);
  std::printf(
      "%s: made %s, acked %s, held %s, lost %s, stored twice %s, streams %d\n",
      what.c_str(), Count(e.made).c_str(), Count(e.acked).c_str(),
      Count(e.held).c_str(), Count(e.lost).c_str(), Count(e.doubled).c_str(),
      e.streams);
  EXPECT_EQ(e.first_problem, "");
  EXPECT_EQ(e.lost, 0u);
  EXPECT_EQ(e.doubled, 0u);
  EXPECT_EQ(e.acked, e.made) << "reports never acked";
  EXPECT_GT(e.made, 0u);
}

// Sends seq 1..n of host "lag-probe" to `writer` and times how long until
// `reader` answers GetHost with that seq; returns the worst.
absl::Duration MeasureFeedLag(const std::string& writer,
                              const std::string& reader, int n) {
  auto wch = grpc::CreateChannel(writer, grpc::InsecureChannelCredentials());
  auto ingest = v1::TelemetryIngest::NewStub(wch);
  auto rch = grpc::CreateChannel(reader, grpc::InsecureChannelCredentials());
  auto query = v1::FleetQuery::NewStub(rch);
  ReportStream stream(ingest.get());
  server::SampleHost host = server::FleetHost(7);
  host.host_id = "lag-probe";
  std::vector<absl::Duration> lags;
  for (int seq = 1; seq <= n; ++seq) {
    v1::HostReport r = server::SampleReport(host, seq, absl::Now());
    const absl::Time sent = absl::Now();
    EXPECT_TRUE(stream.Send(r));
    EXPECT_TRUE(stream.WaitAcked(seq));
    const absl::Time acked = absl::Now();
    while (absl::Now() - sent < absl::Seconds(10)) {
      grpc::ClientContext ctx;
      v1::GetHostRequest req;
      req.set_host_id("lag-probe");
      v1::HostState state;
      if (query->GetHost(&ctx, req, &state).ok() &&
          state.latest().seq() == uint64_t(seq)) {
        break;
      }
      absl::SleepFor(absl::Milliseconds(5));
    }
    lags.push_back(absl::Now() - acked);
    absl::SleepFor(absl::Milliseconds(137));  // not in step with the poll
  }
  stream.Finish();
  std::sort(lags.begin(), lags.end());
  std::printf(
      "feed lag (ack on one replica to GetHost on the other), %d probes: "
      "median %s, max %s\n",
      n, absl::FormatDuration(lags[lags.size() / 2]).c_str(),
      absl::FormatDuration(lags.back()).c_str());
  return lags.back();
}

TEST(ReplicasTest, KillOneReplicaUnderLoad) {
  TwoReplicas env;
  ASSERT_NO_FATAL_FAILURE(env.Start());
  auto& dsn = env.dsn;
  auto& r1 = env.r1;
  auto& r2 = env.r2;
  const std::vector<std::string> both = {r1->grpc_address, r2->grpc_address};

  Fleet fleet;
  fleet.Start(both);
  const std::string logs = NewTempDir("replica-agent");
  auto agent =
      StartAgent("kprobe-multi-6.14", both[0] + "," + both[1], logs + "/state",
                 "real-agent", absl::Milliseconds(250), logs + "/agent.log");
  ASSERT_TRUE(agent.ok()) << agent.status();
  // The load generator on the replica that survives.
  server::LoadOptions lo;
  lo.server = r2->grpc_address;
  lo.hosts = 100;
  lo.first_host = 1000;
  lo.duration = absl::Seconds(12);
  lo.window = 8;
  absl::StatusOr<server::LoadResult> load;
  std::thread loadgen([&] { load = server::RunLoad(lo); });

  absl::SleepFor(absl::Seconds(4));
  EXPECT_LT(MeasureFeedLag(r1->grpc_address, r2->grpc_address, 10),
            absl::Seconds(2));

  const uint64_t acked_before = fleet.acked();
  auto real_before = PgStoredSeqs(*dsn, "real-agent");
  ASSERT_TRUE(real_before.ok()) << real_before.status();
  r1->process->Kill();
  const absl::Time killed = absl::Now();
  absl::SleepFor(absl::Seconds(8));
  fleet.Stop();
  loadgen.join();
  ASSERT_TRUE((*agent)->Signal(SIGTERM).ok());
  ASSERT_TRUE((*agent)->Wait(absl::Seconds(30)).ok());

  std::printf(
      "replica-a killed after %s acked reports; %s later the fleet had %s\n",
      Count(acked_before).c_str(),
      absl::FormatDuration(absl::Now() - killed).c_str(),
      Count(fleet.acked()).c_str());
  ExpectExactlyOnce(*dsn, fleet, "kill one replica");
  EXPECT_GT(fleet.acked(), acked_before + kAgents * 10)
      << "agents did not carry on";
  // The real agent carried on too: more seqs, all once, none missing.
  auto real = PgStoredSeqs(*dsn, "real-agent");
  ASSERT_TRUE(real.ok());
  ASSERT_FALSE(real->empty());
  EXPECT_EQ(CheckContiguous(*real, 1, real->back()), "");
  EXPECT_GT(real->size(), real_before->size() + 10);
  ASSERT_TRUE(load.ok()) << load.status();
  EXPECT_GT(load->acked, 0u);
  EXPECT_EQ(load->failed_streams, 0u) << load->first_error;
  // The survivor answers for every host, including those only replica-a
  // ever stored.
  auto listed = ListedHosts(r2->grpc_address);
  ASSERT_TRUE(listed.ok()) << listed.status();
  std::vector<std::string> want = {"lag-probe", "real-agent"};
  for (auto& a : fleet.agents) want.push_back(a->host_id());
  for (int i = 0; i < lo.hosts; ++i)
    want.push_back(server::FleetHost(lo.first_host + i).host_id);
  std::sort(want.begin(), want.end());
  EXPECT_EQ(*listed, want);
}

TEST(ReplicasTest, PostgresRestartUnderLoad) {
  TwoReplicas env;
  ASSERT_NO_FATAL_FAILURE(env.Start());
  auto& cluster = env.cluster;
  auto& dsn = env.dsn;
  auto& r1 = env.r1;
  auto& r2 = env.r2;
  Fleet fleet;
  fleet.Start({r1->grpc_address, r2->grpc_address});
  absl::SleepFor(absl::Seconds(4));
  const uint64_t acked_before = fleet.acked();
  // A crash: every PostgreSQL process gets SIGKILL; recovery on restart.
  const absl::Time down = absl::Now();
  (*cluster)->Kill();
  absl::SleepFor(absl::Seconds(1));
  ASSERT_TRUE((*cluster)->Restart().ok());
  std::printf("PostgreSQL down for %s\n",
              absl::FormatDuration(absl::Now() - down).c_str());
  // Acks resume once the replicas have connected again.
  const absl::Time restarted = absl::Now();
  const uint64_t acked_at_restart = fleet.acked();
  while (fleet.acked() < acked_at_restart + kAgents &&
         absl::Now() - restarted < absl::Seconds(20)) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  std::printf("acks resumed %s after PostgreSQL accepted connections again\n",
              absl::FormatDuration(absl::Now() - restarted).c_str());
  absl::SleepFor(absl::Seconds(5));
  fleet.Stop();
  ExpectExactlyOnce(*dsn, fleet, "PostgreSQL restart");
  EXPECT_GT(fleet.acked(), acked_before + kAgents * 10);
  // Both replicas lived through it and see every host.
  EXPECT_TRUE(r1->process->running());
  EXPECT_TRUE(r2->process->running());
  std::vector<std::string> want;
  for (auto& a : fleet.agents) want.push_back(a->host_id());
  std::sort(want.begin(), want.end());
  for (const ServerRun* r : {&*r1, &*r2}) {
    auto listed = ListedHosts(r->grpc_address);
    ASSERT_TRUE(listed.ok()) << listed.status();
    EXPECT_EQ(*listed, want);
  }
}

TEST(ReplicasTest, WrongDsnFailsAtOnceWithoutListening) {
  auto cluster = PostgresCluster::Start();
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  // A database that does not exist on a server that does.
  const std::string dir = NewTempDir("replica-bad");
  const std::vector<std::string> argv = {
      Runfile("server/tracehealth-server"),
      "--store=postgres",
      "--postgres_dsn=" + (*cluster)->Dsn("nosuchdb") + " password=s3cret",
      "--listen=127.0.0.1:0",
      "--metrics_listen=127.0.0.1:0",
      "--port_file=" + dir + "/ports"};
  auto p = Subprocess::Start(argv, dir + "/log");
  ASSERT_TRUE(p.ok()) << p.status();
  auto rc = (*p)->Wait(absl::Seconds(15));
  ASSERT_TRUE(rc.ok()) << rc.status();
  EXPECT_EQ(*rc, 1);
  auto log = ReadFile(dir + "/log");
  ASSERT_TRUE(log.ok());
  EXPECT_NE(log->find("postgres: cannot connect (host=" + (*cluster)->dir()),
            std::string::npos)
      << *log;
  EXPECT_NE(log->find("dbname=nosuchdb user=postgres): "), std::string::npos)
      << *log;
  EXPECT_NE(log->find("database \"nosuchdb\" does not exist"),
            std::string::npos)
      << *log;
  EXPECT_EQ(log->find("s3cret"), std::string::npos) << *log;
  // It never got as far as listening.
  EXPECT_FALSE(ReadFile(dir + "/ports").ok());
  EXPECT_EQ(log->find("grpc="), std::string::npos) << *log;
}

}  // namespace
}  // namespace tracehealth::testing
