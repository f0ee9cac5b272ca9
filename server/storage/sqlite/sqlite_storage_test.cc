#include "server/storage/sqlite/sqlite_storage.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "server/storage/conformance/alert_store_conformance.h"
#include "server/storage/conformance/calibration_store_conformance.h"
#include "server/storage/conformance/event_store_conformance.h"
#include "server/storage/conformance/replica_conformance.h"
#include "server/storage/conformance/report_store_conformance.h"
#include "server/storage/conformance/test_rows.h"
#include "server/storage/sqlite/sqlite_test_util.h"

namespace tracehealth::server {
namespace {

absl::StatusOr<OpenedReportStore> OpenReports() {
  const std::string path = NewDbPath();
  absl::StatusOr<std::unique_ptr<SqliteStorage>> s = SqliteStorage::Open(path);
  if (!s.ok()) return s.status();
  OpenedReportStore o;
  o.store = *std::move(s);
  // Another connection adds a trigger; the store's statements see the new
  // schema on their next run.
  o.refuse_insert = [path](const std::string& host, uint64_t seq) {
    Sql(path, absl::StrCat("CREATE TRIGGER refuse BEFORE INSERT ON reports "
                           "WHEN NEW.host_id = '",
                           host, "' AND NEW.seq = ", seq,
                           " BEGIN SELECT RAISE(ABORT, 'refused'); END"));
  };
  o.allow_inserts = [path] { Sql(path, "DROP TRIGGER refuse"); };
  return o;
}

absl::StatusOr<std::unique_ptr<AlertStore>> OpenAlerts() {
  absl::StatusOr<std::unique_ptr<SqliteStorage>> s =
      SqliteStorage::Open(NewDbPath());
  if (!s.ok()) return s.status();
  return std::unique_ptr<AlertStore>(*std::move(s));
}

INSTANTIATE_TEST_SUITE_P(Sqlite, ReportStoreConformance,
                         ::testing::Values(ReportStoreBackend{"sqlite",
                                                              OpenReports}),
                         ReportStoreBackendName);
absl::StatusOr<ReplicaDatabase> NewReplicaDatabase() {
  ReplicaDatabase db;
  db.shared = false;  // one server holds the file
  db.open = [path = NewDbPath()]() -> absl::StatusOr<ReplicaStore> {
    absl::StatusOr<std::unique_ptr<SqliteStorage>> s =
        SqliteStorage::Open(path);
    if (!s.ok()) return s.status();
    return AsReplicaStore(std::shared_ptr<SqliteStorage>(*std::move(s)));
  };
  return db;
}

INSTANTIATE_TEST_SUITE_P(Sqlite, ReplicaConformance,
                         ::testing::Values(ReplicaBackend{"sqlite",
                                                          NewReplicaDatabase}),
                         ReplicaBackendName);
INSTANTIATE_TEST_SUITE_P(Sqlite, AlertStoreConformance,
                         ::testing::Values(AlertStoreBackend{"sqlite",
                                                             OpenAlerts}),
                         AlertStoreBackendName);

absl::StatusOr<std::unique_ptr<EventStore>> OpenEvents() {
  absl::StatusOr<std::unique_ptr<SqliteStorage>> s =
      SqliteStorage::Open(NewDbPath());
  if (!s.ok()) return s.status();
  return std::unique_ptr<EventStore>(*std::move(s));
}
INSTANTIATE_TEST_SUITE_P(Sqlite, EventStoreConformance,
                         ::testing::Values(EventStoreBackend{"sqlite",
                                                             OpenEvents}),
                         EventStoreBackendName);

absl::StatusOr<std::unique_ptr<CalibrationStore>> OpenCalibrations() {
  absl::StatusOr<std::unique_ptr<SqliteStorage>> s =
      SqliteStorage::Open(NewDbPath());
  if (!s.ok()) return s.status();
  return std::unique_ptr<CalibrationStore>(*std::move(s));
}
INSTANTIATE_TEST_SUITE_P(Sqlite, CalibrationStoreConformance,
                         ::testing::Values(CalibrationStoreBackend{
                             "sqlite", OpenCalibrations}),
                         CalibrationStoreBackendName);

TEST(SqliteStorageTest, DataSurvivesReopen) {
  std::string path = NewDbPath();
  {
    auto s = SqliteStorage::Open(path);
    ASSERT_TRUE(s.ok());
    std::vector<ReportRow> rows;
    for (uint64_t i = 1; i <= 500; ++i) rows.push_back(TestRow("h", i, i));
    ASSERT_TRUE((*s)->WriteBatch(rows).ok());
  }
  auto s = SqliteStorage::Open(path);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*(*s)->CountReports("h"), 500);
  EXPECT_EQ(*(*s)->GetReport("h", 500), "blob500");
  EXPECT_EQ(*(*s)->SchemaVersion(), SqliteStorage::LatestSchemaVersion());
  // The ledger was saved at close: nothing to replay.
  EXPECT_EQ((*s)->ledger_rows_replayed(), 0);
  auto again = (*s)->WriteBatch({TestRow("h", 500, 1), TestRow("h", 501, 1)});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, (std::vector<WriteOutcome>{WriteOutcome::kDuplicate,
                                               WriteOutcome::kStored}));
}

TEST(SqliteStorageTest, GetReportFindsEveryStoredSeq) {
  const std::string path = NewDbPath();
  {
    auto s = SqliteStorage::Open(path);
    ASSERT_TRUE(s.ok());
    // Seqs 1..5 of h in one batch, then 6 and 7 in two more, with h2 between.
    std::vector<ReportRow> rows;
    for (uint64_t i = 1; i <= 5; ++i) rows.push_back(TestRow("h", i, i));
    ASSERT_TRUE((*s)->WriteBatch(rows).ok());
    ASSERT_TRUE(
        (*s)->WriteBatch({TestRow("h", 6, 6), TestRow("h2", 1, 6)}).ok());
    // A replay of an older seq with the newest: stored once, nothing moves.
    ASSERT_TRUE(
        (*s)->WriteBatch({TestRow("h", 7, 7), TestRow("h", 3, 7)}).ok());
    // Newest (7), the one before (6), older ones (1, 5) and another host.
    for (uint64_t seq : {7, 6, 5, 1}) {
      auto r = (*s)->GetReport("h", seq);
      ASSERT_TRUE(r.ok()) << seq << ": " << r.status();
      EXPECT_EQ(*r, absl::StrCat("blob", seq));
    }
    EXPECT_EQ(*(*s)->GetReport("h2", 1), "blob1");
    EXPECT_TRUE(absl::IsNotFound((*s)->GetReport("h", 8).status()));
    EXPECT_TRUE(absl::IsNotFound((*s)->GetReport("h", 0).status()));
    EXPECT_TRUE(absl::IsNotFound((*s)->GetReport("nope", 7).status()));
    // Retention deletes everything but each host's newest: the one before
    // is gone, though its row was remembered.
    ASSERT_TRUE((*s)->DeleteReportsReceivedBefore(int64_t{1} << 62).ok());
    EXPECT_EQ(*(*s)->GetReport("h", 7), "blob7");
    EXPECT_TRUE(absl::IsNotFound((*s)->GetReport("h", 6).status()));
  }
  // After a restart the newest rows are known from the ledger.
  auto s = SqliteStorage::Open(path);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*(*s)->GetReport("h", 7), "blob7");
  EXPECT_EQ(*(*s)->GetReport("h2", 1), "blob1");
  ASSERT_TRUE((*s)->WriteBatch({TestRow("h", 8, 8)}).ok());
  EXPECT_EQ(*(*s)->GetReport("h", 8), "blob8");
  EXPECT_EQ(*(*s)->GetReport("h", 7), "blob7");
}

TEST(SqliteStorageTest, RetentionOverManyChunksDeletesExactlyTheOldRows) {
  const std::string path = NewDbPath();
  auto s = SqliteStorage::Open(path);
  ASSERT_TRUE(s.ok());
  // 100 hosts, 700 reports each, received one per time unit in order:
  // 70,000 rows, several deletion chunks of 20,000. Every row has a record
  // (which goes with its report).
  int64_t t = 0;
  for (uint64_t seq = 1; seq <= 700; ++seq) {
    std::vector<ReportRow> rows;
    for (int h = 0; h < 100; ++h) {
      rows.push_back(TestRow("h" + std::to_string(h), seq, ++t, "b"));
      rows.back().record = "r" + std::to_string(seq);
    }
    ASSERT_TRUE((*s)->WriteBatch(rows).ok());
  }
  // Rows received at 2..t+1; delete those before 45,002 (45,000 rows).
  auto deleted = (*s)->DeleteReportsReceivedBefore(45001 + 1);
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  EXPECT_EQ(*deleted, 45000);
  EXPECT_EQ(*(*s)->CountReports(""), 25000);
  EXPECT_EQ(*(*s)->CountReports("h7"), 250);
  EXPECT_EQ(SqlInt(path, "SELECT count(*) FROM records"), 25000);
  EXPECT_EQ(SqlInt(path,
                   "SELECT count(*) FROM records c JOIN reports r ON r.id = "
                   "c.id AND CAST(c.record AS TEXT) = 'r' || r.seq"),
            25000);
  // Nothing is left to delete at the same cutoff; everything old goes with
  // a later one, except each host's newest report.
  EXPECT_EQ(*(*s)->DeleteReportsReceivedBefore(45002), 0);
  EXPECT_EQ(*(*s)->DeleteReportsReceivedBefore(int64_t{1} << 62), 24900);
  EXPECT_EQ(*(*s)->CountReports(""), 100);
  EXPECT_EQ(SqlInt(path, "SELECT count(*) FROM records"), 100);
  EXPECT_TRUE((*s)->GetReport("h42", 700).ok());
}

TEST(SqliteStorageTest, ClosingClosesEveryConnection) {
  // SQLite removes the write-ahead log when the last connection to the file
  // closes; a connection left open (say, one with a live statement, which
  // sqlite3_close refuses to close) keeps it.
  const std::string path = NewDbPath();
  {
    auto s = SqliteStorage::Open(path);
    ASSERT_TRUE(s.ok()) << s.status();
    std::vector<ReportRow> rows;
    for (uint64_t i = 1; i <= 100; ++i) {
      rows.push_back(TestRow("h", i, 1, std::string(2000, 'x')));
    }
    ASSERT_TRUE((*s)->WriteBatch(rows).ok());
    ASSERT_TRUE((*s)->PutAlert(AlertRow{}).ok());
    EXPECT_GT(FileBytes(path + "-wal"), 100 * 2000);
  }
  EXPECT_EQ(FileBytes(path + "-wal"), -1) << "a connection stayed open";
  EXPECT_GT(FileBytes(path), 100 * 2000);  // the rows are in the database
}

}  // namespace
}  // namespace tracehealth::server
