// Two tracehealth-server replicas on one PostgreSQL 15 database the test
// starts itself: canary calibrations submitted to replica A price a host
// of their hardware class on replica B too, within B's class refresh
// interval (ServerConfig::class_refresh_interval, 1 s) and one load, with
// no report of the host in between and no restart.
//
// Class: "QEMU TCG CPU version 2.5+ / 6.1" (the preempt-voluntary-dynamic-
// 6.1-128k fixture: 128,000 threads, none with a shadow stack, B = 32).
#include <signal.h>

#include <cstdio>
#include <optional>
#include <string>

#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/tracehealth/v1/ingest.grpc.pb.h"
#include "proto/tracehealth/v1/query.grpc.pb.h"
#include "tests/reliability/processes.h"
#include "tests/replicas/replica_env.h"
#include "tests/util/class_canary.h"
#include "tests/util/eventually.h"
#include "tests/util/postgres_cluster.h"
#include "tests/util/subprocess.h"

namespace tracehealth::testing {
namespace {

constexpr char kFixture[] = "preempt-voluntary-dynamic-6.1-128k";
constexpr char kCanaries[] =
    "3 canaries of class QEMU TCG CPU version 2.5+ / 6.1";

// 128,000 threads without a stack, B = 32: 4000 passes, 3999 stop early:
// V = 3999 + 32 * 3999 * 4000 / 2 + 128,000 = 256,067,999 visits, plus
// 2 us * 4000 passes + 20 ns * 128,000 allocations = 0.01056 s.
// At the seed 88.7 ns: 22.71323151 + 0.01056 = 22.72379151 s.
// At the class's 400 ns: 102.4271996 + 0.01056 = 102.4377596 s.
constexpr double kSeedWalk = 22.72379151;
constexpr double kClassWalk = 102.4377596;

std::string CVisitOrigin(const v1::AttachPrediction& p) {
  for (const v1::BasisConstant& c : p.basis().constants()) {
    if (c.name() == "c_visit") return c.origin();
  }
  return "";
}

std::unique_ptr<v1::FleetQuery::Stub> QueryOf(const ServerRun& r) {
  return v1::FleetQuery::NewStub(
      grpc::CreateChannel(r.grpc_address, grpc::InsecureChannelCredentials()));
}

TEST(CalibrationRefreshTest, CanariesOnOneReplicaPriceTheClassOnTheOther) {
  auto cluster = PostgresCluster::Start();
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  auto dsn = (*cluster)->CreateDatabase();
  ASSERT_TRUE(dsn.ok()) << dsn.status();
  auto a = StartReplica("replica-a", *dsn);
  ASSERT_TRUE(a.ok()) << a.status();
  auto b = StartReplica("replica-b", *dsn);
  ASSERT_TRUE(b.ok()) << b.status();
  auto query_a = QueryOf(*a);
  auto query_b = QueryOf(*b);

  // guest-1 (no calibration of its own) reports to A; B has it from the
  // change feed, priced with the seed. The agent then stops: nothing but
  // the canaries changes guest-1's price afterwards.
  const std::string dir = NewTempDir("calibration-refresh");
  auto agent = StartAgent(kFixture, a->grpc_address, dir + "/state", "guest-1",
                          absl::Seconds(1), dir + "/agent.log");
  ASSERT_TRUE(agent.ok()) << agent.status();
  std::optional<v1::AttachPrediction> p;
  ASSERT_TRUE(Eventually(
      [&] {
        p = PredictFunctionGraph(*query_b, "guest-1");
        return p.has_value();
      },
      absl::Seconds(60)))
      << ReadFile(dir + "/agent.log").value_or("");
  ASSERT_TRUE((*agent)->Signal(SIGTERM).ok());
  ASSERT_TRUE((*agent)->Wait(absl::Seconds(30)).ok());
  p = PredictFunctionGraph(*query_b, "guest-1");
  ASSERT_TRUE(p.has_value());
  ASSERT_EQ(p->passes(), 4000u);
  EXPECT_DOUBLE_EQ(p->visits(), 256067999);
  EXPECT_NEAR(p->walk_seconds(), kSeedWalk, 1e-6);
  EXPECT_NE(CVisitOrigin(*p), kCanaries);

  // Three canaries to A: c_visit 300, 500, 400 ns (median 400 ns), fixed
  // 1, 3, 2 ms (median 2 ms).
  auto ingest_a = v1::TelemetryIngest::NewStub(
      grpc::CreateChannel(a->grpc_address, grpc::InsecureChannelCredentials()));
  const double visits[] = {300e-9, 500e-9, 400e-9};
  const double fixed[] = {1e-3, 3e-3, 2e-3};
  for (int i = 0; i < 3; ++i) {
    grpc::ClientContext ctx;
    v1::SubmitCalibrationResponse r;
    grpc::Status s = ingest_a->SubmitCalibration(
        &ctx, Canary("canary-" + std::to_string(i), visits[i], fixed[i]), &r);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  const absl::Time submitted = absl::Now();
  // A prices guest-1 with them at once (PredictAttach prices at query
  // time from the replica's classes).
  p = PredictFunctionGraph(*query_a, "guest-1");
  ASSERT_TRUE(p.has_value());
  EXPECT_NEAR(p->walk_seconds(), kClassWalk, 1e-6);
  EXPECT_EQ(CVisitOrigin(*p), kCanaries);

  // B within its 1 s refresh interval and a load; 5 s allows for a loaded
  // machine.
  std::optional<v1::AttachPrediction> on_b;
  const bool priced = Eventually(
      [&] {
        on_b = PredictFunctionGraph(*query_b, "guest-1");
        return on_b.has_value() && CVisitOrigin(*on_b) == kCanaries;
      },
      absl::Seconds(5));
  const absl::Duration took = absl::Now() - submitted;
  std::printf("replica B priced guest-1 by its class %s after the canaries\n",
              absl::FormatDuration(took).c_str());
  ASSERT_TRUE(priced) << "replica B still prices guest-1 with \""
                      << (on_b ? CVisitOrigin(*on_b) : "") << "\"";
  EXPECT_NEAR(on_b->walk_seconds(), kClassWalk, 1e-6);
  EXPECT_NEAR(on_b->latency_seconds(),
              kClassWalk + 2e-3 + on_b->patch_seconds(), 1e-6);
}

}  // namespace
}  // namespace tracehealth::testing
