#include "server/storage/postgres/postgres_storage.h"

#include <algorithm>
#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "server/storage/conformance/alert_store_conformance.h"
#include "server/storage/conformance/calibration_store_conformance.h"
#include "server/storage/conformance/event_store_conformance.h"
#include "server/storage/conformance/heartbeat_conformance.h"
#include "server/storage/conformance/replica_conformance.h"
#include "server/storage/conformance/report_store_conformance.h"
#include "server/storage/conformance/rollup_conformance.h"
#include "server/storage/conformance/test_rows.h"
#include "server/storage/postgres/pg_partitions.h"
#include "server/storage/postgres/pg_rollups.h"
#include "server/storage/rollup.h"
#include "tests/util/postgres_cluster.h"

namespace tracehealth::server {
namespace {

using testing::PostgresCluster;

// One cluster for the whole test binary; a database per test.
PostgresCluster& Cluster() {
  static PostgresCluster* cluster = [] {
    auto c = PostgresCluster::Start();
    if (!c.ok()) {
      std::fprintf(stderr, "cannot start PostgreSQL: %s\n",
                   c.status().ToString().c_str());
      std::abort();
    }
    return c->release();
  }();
  return *cluster;
}

// Stops the cluster when the binary exits normally.
class ClusterEnvironment : public ::testing::Environment {
 public:
  void TearDown() override { delete &Cluster(); }
};
const auto* const kEnv =
    ::testing::AddGlobalTestEnvironment(new ClusterEnvironment);

absl::StatusOr<std::unique_ptr<PostgresStorage>> OpenNew(
    PostgresOptions o = {}) {
  absl::StatusOr<std::string> dsn = Cluster().CreateDatabase();
  if (!dsn.ok()) return dsn.status();
  o.dsn = *dsn;
  return PostgresStorage::Open(o);
}

std::string DbName(const std::string& dsn) {
  return dsn.substr(dsn.rfind("dbname=") + 7);
}

absl::StatusOr<OpenedReportStore> OpenReports() {
  absl::StatusOr<std::string> dsn = Cluster().CreateDatabase();
  if (!dsn.ok()) return dsn.status();
  PostgresOptions o;
  o.dsn = *dsn;
  absl::StatusOr<std::unique_ptr<PostgresStorage>> s = PostgresStorage::Open(o);
  if (!s.ok()) return s.status();
  OpenedReportStore out;
  out.store = *std::move(s);
  const std::string db = DbName(*dsn);
  // A trigger another session adds; the store's next statements see it.
  out.refuse_insert = [db](const std::string& host, uint64_t seq) {
    auto r = Cluster().Sql(
        db, absl::StrCat(
                "CREATE FUNCTION refuse() RETURNS trigger AS $$ BEGIN IF "
                "NEW.host_id = '",
                host, "' AND NEW.seq = ", seq,
                " THEN RAISE EXCEPTION 'refused'; END IF; RETURN NEW; END $$ "
                "LANGUAGE plpgsql; CREATE TRIGGER refuse BEFORE INSERT ON "
                "reports FOR EACH ROW EXECUTE FUNCTION refuse()"));
    ASSERT_TRUE(r.ok()) << r.status();
  };
  out.allow_inserts = [db] {
    auto r = Cluster().Sql(
        db, "DROP TRIGGER refuse ON reports; DROP FUNCTION refuse()");
    ASSERT_TRUE(r.ok()) << r.status();
  };
  return out;
}

absl::StatusOr<std::unique_ptr<AlertStore>> OpenAlerts() {
  absl::StatusOr<std::unique_ptr<PostgresStorage>> s = OpenNew();
  if (!s.ok()) return s.status();
  return std::unique_ptr<AlertStore>(*std::move(s));
}

absl::StatusOr<std::unique_ptr<EventStore>> OpenEvents() {
  absl::StatusOr<std::unique_ptr<PostgresStorage>> s = OpenNew();
  if (!s.ok()) return s.status();
  return std::unique_ptr<EventStore>(*std::move(s));
}

absl::StatusOr<std::unique_ptr<CalibrationStore>> OpenCalibrations() {
  absl::StatusOr<std::unique_ptr<PostgresStorage>> s = OpenNew();
  if (!s.ok()) return s.status();
  return std::unique_ptr<CalibrationStore>(*std::move(s));
}

absl::StatusOr<ReplicaDatabase> NewReplicaDatabase() {
  absl::StatusOr<std::string> dsn = Cluster().CreateDatabase();
  if (!dsn.ok()) return dsn.status();
  ReplicaDatabase db;
  db.shared = true;
  db.open = [dsn = *dsn]() -> absl::StatusOr<ReplicaStore> {
    PostgresOptions o;
    o.dsn = dsn;
    absl::StatusOr<std::unique_ptr<PostgresStorage>> s =
        PostgresStorage::Open(o);
    if (!s.ok()) return s.status();
    return AsReplicaStore(std::shared_ptr<PostgresStorage>(*std::move(s)));
  };
  return db;
}

INSTANTIATE_TEST_SUITE_P(Postgres, ReportStoreConformance,
                         ::testing::Values(ReportStoreBackend{"postgres",
                                                              OpenReports}),
                         ReportStoreBackendName);
int64_t SqlCount(const std::string& db, const std::string& sql) {
  auto out = Cluster().Sql(db, sql);
  EXPECT_TRUE(out.ok()) << out.status();
  int64_t n = -1;
  if (out.ok()) {
    EXPECT_TRUE(absl::SimpleAtoi(*out, &n)) << *out;
  }
  return n;
}

absl::StatusOr<OpenedHeartbeatStore> OpenHeartbeats(absl::Duration interval) {
  absl::StatusOr<std::string> dsn = Cluster().CreateDatabase();
  if (!dsn.ok()) return dsn.status();
  PostgresOptions o;
  o.dsn = *dsn;
  o.full_report_interval = interval;
  absl::StatusOr<std::unique_ptr<PostgresStorage>> s = PostgresStorage::Open(o);
  if (!s.ok()) return s.status();
  OpenedHeartbeatStore out;
  out.store = *std::move(s);
  const std::string db = DbName(*dsn);
  out.full_reports = [db] {
    return SqlCount(db, "SELECT count(*) FROM reports");
  };
  out.chunks = [db] { return SqlCount(db, "SELECT count(*) FROM heartbeats"); };
  out.another = [o]() -> absl::StatusOr<std::unique_ptr<ReportStore>> {
    absl::StatusOr<std::unique_ptr<PostgresStorage>> s =
        PostgresStorage::Open(o);
    if (!s.ok()) return s.status();
    return std::unique_ptr<ReportStore>(*std::move(s));
  };
  return out;
}

INSTANTIATE_TEST_SUITE_P(Postgres, HeartbeatConformance,
                         ::testing::Values(HeartbeatBackend{"postgres",
                                                            OpenHeartbeats}),
                         HeartbeatBackendName);
absl::StatusOr<OpenedRollupStore> OpenRollups() {
  absl::StatusOr<std::string> dsn = Cluster().CreateDatabase();
  if (!dsn.ok()) return dsn.status();
  PostgresOptions o;
  o.dsn = *dsn;
  auto open = [o]() -> absl::StatusOr<std::unique_ptr<ReportStore>> {
    absl::StatusOr<std::unique_ptr<PostgresStorage>> s =
        PostgresStorage::Open(o);
    if (!s.ok()) return s.status();
    return std::unique_ptr<ReportStore>(*std::move(s));
  };
  OpenedRollupStore out;
  absl::StatusOr<std::unique_ptr<ReportStore>> s = open();
  if (!s.ok()) return s.status();
  out.store = *std::move(s);
  out.reopen = open;
  return out;
}

INSTANTIATE_TEST_SUITE_P(Postgres, RollupConformance,
                         ::testing::Values(RollupBackend{"postgres",
                                                         OpenRollups}),
                         RollupBackendName);
INSTANTIATE_TEST_SUITE_P(Postgres, AlertStoreConformance,
                         ::testing::Values(AlertStoreBackend{"postgres",
                                                             OpenAlerts}),
                         AlertStoreBackendName);
INSTANTIATE_TEST_SUITE_P(Postgres, EventStoreConformance,
                         ::testing::Values(EventStoreBackend{"postgres",
                                                             OpenEvents}),
                         EventStoreBackendName);
INSTANTIATE_TEST_SUITE_P(Postgres, CalibrationStoreConformance,
                         ::testing::Values(CalibrationStoreBackend{
                             "postgres", OpenCalibrations}),
                         CalibrationStoreBackendName);
INSTANTIATE_TEST_SUITE_P(Postgres, ReplicaConformance,
                         ::testing::Values(ReplicaBackend{"postgres",
                                                          NewReplicaDatabase}),
                         ReplicaBackendName);

constexpr int64_t kHour = 3600LL * 1000000000LL;

ReportRow At(const std::string& host, uint64_t seq, int64_t received_ns) {
  ReportRow r = TestRow(host, seq, received_ns - 1);
  return r;  // received = observed + 1
}

// Hour partitions around a fixed "now" (hour 1000 since the epoch).
PostgresOptions HourPartitions() {
  PostgresOptions o;
  o.partition_span = absl::Hours(1);
  o.partitions_ahead = 2;
  o.now = [] { return absl::FromUnixNanos(1000 * kHour); };
  return o;
}

std::vector<std::string> PartitionNames(PostgresStorage& s,
                                        const std::string& dsn) {
  auto conn = PgConnection::Connect(dsn);
  EXPECT_TRUE(conn.ok());
  auto parts = ListPartitions(**conn);
  EXPECT_TRUE(parts.ok());
  std::vector<std::string> names;
  for (const ReportPartition& p : *parts) names.push_back(p.name);
  return names;
}

TEST(PostgresStorageTest, OpenCreatesPartitionsAheadAndBatchesExtendThem) {
  absl::StatusOr<std::string> dsn = Cluster().CreateDatabase();
  ASSERT_TRUE(dsn.ok());
  PostgresOptions o = HourPartitions();
  o.dsn = *dsn;
  auto s = PostgresStorage::Open(o);
  ASSERT_TRUE(s.ok()) << s.status();
  // Hour 1000 (now) .. 1002: now + 2 spans, rounded up to whole spans.
  // Names are the start in Unix seconds: hour 1000 is 3,600,000 s.
  EXPECT_EQ(PartitionNames(**s, *dsn),
            (std::vector<std::string>{"reports_3600000", "reports_3603600",
                                      "reports_3607200"}));
  // A row received in hour 1005 makes partitions up to 1007.
  ASSERT_TRUE((*s)->WriteBatch({At("h", 1, 1005 * kHour + 5)}).ok());
  EXPECT_EQ(PartitionNames(**s, *dsn).size(), 6u);  // 1000..1002, 1005..1007
  EXPECT_EQ(*(*s)->GetReport("h", 1), "blob1");
  EXPECT_EQ((*s)->retention_granularity(), absl::Hours(1));
}

TEST(PostgresStorageTest, RetentionDropsWholePartitionsKeepingEachHostsNewest) {
  absl::StatusOr<std::string> dsn = Cluster().CreateDatabase();
  ASSERT_TRUE(dsn.ok());
  PostgresOptions o = HourPartitions();
  o.dsn = *dsn;
  auto s = PostgresStorage::Open(o);
  ASSERT_TRUE(s.ok()) << s.status();
  // Hour 1000: a@1, a@2, silent@1 (silent's only report); hour 1001: a@3,
  // b@1.
  ASSERT_TRUE((*s)->WriteBatch({At("a", 1, 1000 * kHour + 1),
                                At("a", 2, 1000 * kHour + 2),
                                At("silent", 1, 1000 * kHour + 3)})
                  .ok());
  ASSERT_TRUE((*s)->WriteBatch({At("a", 3, 1001 * kHour + 1),
                                At("b", 1, 1001 * kHour + 2)})
                  .ok());
  // Cutoff at the start of hour 1001: hour 1000's partition goes whole;
  // a@1 and a@2 are gone, silent@1 (its newest) is kept, in
  // reports_default.
  auto deleted = (*s)->DeleteReportsReceivedBefore(1001 * kHour);
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  EXPECT_EQ(*deleted, 2);
  std::vector<std::string> names = PartitionNames(**s, *dsn);
  EXPECT_EQ(std::count(names.begin(), names.end(), "reports_3600000"), 0);
  EXPECT_EQ(*(*s)->CountReports(""), 3);  // silent@1, a@3, b@1
  EXPECT_EQ(*(*s)->GetReport("silent", 1), "blob1");
  EXPECT_TRUE(absl::IsNotFound((*s)->GetReport("a", 2).status()));
  auto in_default =
      Cluster().Sql(DbName(*dsn), "SELECT host_id, seq FROM reports_default");
  ASSERT_TRUE(in_default.ok());
  EXPECT_EQ(*in_default, "silent|1\n");
  // When silent reports again, its kept row is an old one like any other.
  ASSERT_TRUE((*s)->WriteBatch({At("silent", 2, 1001 * kHour + 9)}).ok());
  EXPECT_EQ(*(*s)->DeleteReportsReceivedBefore(1001 * kHour), 1);
  EXPECT_EQ(*(*s)->CountReports("silent"), 1);
  // The index still loads every host's newest report.
  std::map<std::string, uint64_t> latest;
  ASSERT_TRUE(
      (*s)->LoadLatest([&](LatestRow& r) { latest[r.host_id] = r.latest_seq; })
          .ok());
  EXPECT_EQ(latest, (std::map<std::string, uint64_t>{
                        {"a", 3}, {"b", 1}, {"silent", 2}}));
}

// Heartbeats across a partition drop: a full report whose partition goes
// is kept (in reports_default) while a chunk on it lives.
TEST(PostgresStorageTest, RetentionKeepsAHeartbeatsFullReportPastItsPartition) {
  absl::StatusOr<std::string> dsn = Cluster().CreateDatabase();
  ASSERT_TRUE(dsn.ok());
  PostgresOptions o = HourPartitions();
  o.dsn = *dsn;
  auto s = PostgresStorage::Open(o);
  ASSERT_TRUE(s.ok()) << s.status();
  // One material content (digest 7) for a@1-3, another for a@4: 1 whole
  // (hour 1000), 2 (hour 1000) and 3 (hour 1001) heartbeats of 1, 4 whole
  // (hour 1002).
  auto row = [](uint64_t seq, int64_t received_ns, uint64_t digest) {
    ReportRow r = At("a", seq, received_ns);
    r.material_digest = digest;
    return r;
  };
  ASSERT_TRUE((*s)->WriteBatch({row(1, 1000 * kHour + 1, 7),
                                row(2, 1000 * kHour + 2, 7)})
                  .ok());
  ASSERT_TRUE((*s)->WriteBatch({row(3, 1001 * kHour + 1, 7)}).ok());
  const std::string db = DbName(*dsn);
  EXPECT_EQ(SqlCount(db, "SELECT count(*) FROM reports"), 1);
  EXPECT_EQ(SqlCount(db, "SELECT sum(beats) FROM heartbeats"), 2);
  // Hour 1000's partition goes; a@1 is copied back: 2-3's chunk (last
  // received in hour 1001) is on it.
  auto deleted = (*s)->DeleteReportsReceivedBefore(1001 * kHour);
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  EXPECT_EQ(*deleted, 0);
  std::vector<std::string> names = PartitionNames(**s, *dsn);
  EXPECT_EQ(std::count(names.begin(), names.end(), "reports_3600000"), 0);
  auto in_default =
      Cluster().Sql(db, "SELECT host_id, seq FROM reports_default");
  ASSERT_TRUE(in_default.ok());
  EXPECT_EQ(*in_default, "a|1\n");
  EXPECT_EQ(*(*s)->CountReports("a"), 3);
  // A restart finds a@3 on a@1's record.
  std::map<std::string, uint64_t> latest;
  ASSERT_TRUE(
      (*s)->LoadLatest([&](LatestRow& r) { latest[r.host_id] = r.latest_seq; })
          .ok());
  EXPECT_EQ(latest, (std::map<std::string, uint64_t>{{"a", 3}}));
  // a@4 (another content) is whole; at hour 1002 the chunk and a@1 go.
  ASSERT_TRUE((*s)->WriteBatch({row(4, 1002 * kHour + 1, 8)}).ok());
  deleted = (*s)->DeleteReportsReceivedBefore(1002 * kHour);
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  EXPECT_EQ(*deleted, 3);
  EXPECT_EQ(*(*s)->CountReports("a"), 1);
  EXPECT_EQ(*(*s)->GetReport("a", 4), "blob4");
}

TEST(PostgresStorageTest, NewerSchemaIsRefusedAndReplicasMigrateOnce) {
  absl::StatusOr<std::string> dsn = Cluster().CreateDatabase();
  ASSERT_TRUE(dsn.ok());
  // Four replicas starting at once: one migrates, the others wait and find
  // the schema current.
  std::vector<absl::StatusOr<std::unique_ptr<PostgresStorage>>> opened(4);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      PostgresOptions o;
      o.dsn = *dsn;
      opened[i] = PostgresStorage::Open(o);
    });
  }
  for (std::thread& t : threads) t.join();
  for (auto& s : opened) ASSERT_TRUE(s.ok()) << s.status();
  auto rows = Cluster().Sql(DbName(*dsn),
                            "SELECT version FROM schema_version ORDER BY 1");
  ASSERT_TRUE(rows.ok());
  // One row per migration (1: reports, alerts, leases; 2: events; 3:
  // calibrations; 4: records; 5: heartbeats; 6: rollups), each applied
  // once.
  EXPECT_EQ(*rows, "1\n2\n3\n4\n5\n6\n");
  ASSERT_TRUE(Cluster()
                  .Sql(DbName(*dsn), "INSERT INTO schema_version VALUES (99)")
                  .ok());
  PostgresOptions o;
  o.dsn = *dsn;
  auto newer = PostgresStorage::Open(o);
  ASSERT_FALSE(newer.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(newer.status())) << newer.status();
  EXPECT_NE(newer.status().message().find(
                "database schema version 99 is newer than this "
                "server's (6)"),
            std::string::npos)
      << newer.status();
}

}  // namespace
}  // namespace tracehealth::server

namespace tracehealth::server {
namespace {

RollupRow OneRollup(int64_t hour) {
  RollupRow r;
  r.host_id = "h";
  r.hour_start_ns = hour;
  r.reports = 1;
  r.first_seq = r.last_seq = 1;
  r.pool_budget_ratio = {0.1, 0.30000000000000004, 0.2};  // exact doubles
  return r;
}

// PgWriteRollups writes only over the watermark it was given: a replica's
// pass that lost the race writes nothing (Aborted).
TEST(PostgresRollupsTest, WritesOnlyOverTheExpectedWatermark) {
  absl::StatusOr<std::string> dsn = Cluster().CreateDatabase();
  ASSERT_TRUE(dsn.ok()) << dsn.status();
  PostgresOptions o;
  o.dsn = *dsn;
  ASSERT_TRUE(PostgresStorage::Open(o).ok());  // the schema
  auto conn = PgConnection::Connect(*dsn);
  ASSERT_TRUE(conn.ok()) << conn.status();
  PgConnection& c = **conn;
  const int64_t h = kRollupHourNs;
  ASSERT_TRUE(PgWriteRollups(c, std::nullopt, 2 * h, {OneRollup(h)}).ok());
  EXPECT_EQ(*PgRollupWatermark(c), 2 * h);
  EXPECT_EQ(PgWriteRollups(c, std::nullopt, 3 * h, {OneRollup(2 * h)}).code(),
            absl::StatusCode::kAborted);
  EXPECT_EQ(PgWriteRollups(c, h, 3 * h, {OneRollup(2 * h)}).code(),
            absl::StatusCode::kAborted);
  EXPECT_EQ(*PgRollupWatermark(c), 2 * h);
  EXPECT_EQ(PgReadRollups(c, "h", 0, 10 * h)->size(), 1u);
  EXPECT_TRUE(PgWriteRollups(c, 2 * h, 3 * h, {OneRollup(2 * h)}).ok());
  std::vector<RollupRow> rows = *PgReadRollups(c, "h", 0, 10 * h);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1], OneRollup(2 * h));
}

}  // namespace
}  // namespace tracehealth::server
