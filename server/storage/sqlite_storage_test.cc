#include "server/storage/sqlite_storage.h"

#include <sqlite3.h>
#include <sys/stat.h>

#include <algorithm>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/util/subprocess.h"

namespace tracehealth::server {
namespace {

ReportRow Row(const std::string& host, uint64_t seq, int64_t observed_ns,
              const std::string& blob = "blob") {
  ReportRow r;
  r.host_id = host;
  r.seq = seq;
  r.observed_at_ns = observed_ns;
  r.received_at_ns = observed_ns + 1;
  r.worst_risk = 2;
  r.attach_latency_seconds = 1.5;
  r.blob = blob + std::to_string(seq);
  return r;
}

std::string DbPath() {
  return testing::NewTempDir("sqlite") + "/tracehealth.db";
}

TEST(SqliteStorageTest, StoresOnceAndReportsDuplicates) {
  auto s = SqliteStorage::Open(DbPath());
  ASSERT_TRUE(s.ok()) << s.status();
  std::vector<ReportRow> rows = {Row("a", 1, 100), Row("a", 2, 200),
                                 Row("b", 1, 150)};
  auto out = (*s)->WriteBatch(rows);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, (std::vector<WriteOutcome>{WriteOutcome::kStored,
                                              WriteOutcome::kStored,
                                              WriteOutcome::kStored}));
  // Replay of a@2 (even with different content) and a new a@3.
  std::vector<ReportRow> again = {Row("a", 2, 200, "other"), Row("a", 3, 300),
                                  Row("a", 3, 300)};
  out = (*s)->WriteBatch(again);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(*out, (std::vector<WriteOutcome>{WriteOutcome::kDuplicate,
                                              WriteOutcome::kStored,
                                              WriteOutcome::kDuplicate}));
  EXPECT_EQ(*(*s)->CountReports("a"), 3);
  EXPECT_EQ(*(*s)->CountReports(""), 4);
  EXPECT_EQ(*(*s)->GetReport("a", 2), "blob2");
  EXPECT_TRUE(absl::IsNotFound((*s)->GetReport("a", 9).status()));

  std::map<std::string, LatestRow> latest;
  ASSERT_TRUE((*s)->LoadLatest([&](const LatestRow& r) { latest[r.host_id] = r; }).ok());
  ASSERT_EQ(latest.size(), 2u);
  EXPECT_EQ(latest["a"].latest_seq, 3u);
  EXPECT_EQ(latest["a"].reports, 3u);
  EXPECT_EQ(latest["a"].blob, "blob3");
  EXPECT_EQ(latest["a"].first_seen_ns, 101);
  EXPECT_EQ(latest["a"].last_seen_ns, 301);
  EXPECT_EQ(latest["b"].latest_seq, 1u);
  EXPECT_GT(*(*s)->SizeBytes(), 0);
}

int64_t FileBytes(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? st.st_size : -1;
}

TEST(SqliteStorageTest, WriteAheadLogStartsOverInsteadOfGrowing) {
  // 40 MB of rows written back to back, with the background checkpointer
  // effectively off: the writer's own checkpoints must keep the log near
  // wal_reset_bytes.
  const std::string path = DbPath();
  SqliteOptions opts;
  opts.checkpoint_interval = absl::Hours(1);
  opts.wal_reset_bytes = 1 << 20;
  auto s = SqliteStorage::Open(path, opts);
  ASSERT_TRUE(s.ok()) << s.status();
  const std::string blob(2000, 'x');
  int64_t largest_wal = 0;
  uint64_t seq = 0;
  for (int batch = 0; batch < 200; ++batch) {
    std::vector<ReportRow> rows;
    for (int i = 0; i < 100; ++i) rows.push_back(Row("h" + std::to_string(i), ++seq, 1, blob));
    ASSERT_TRUE((*s)->WriteBatch(rows).ok());
    largest_wal = std::max(largest_wal, FileBytes(path + "-wal"));
  }
  EXPECT_EQ(*(*s)->CountReports(""), 20000);
  EXPECT_GT(largest_wal, 0);
  EXPECT_LT(largest_wal, 4 << 20) << "the log grew instead of starting over";
}

TEST(SqliteStorageTest, BackgroundCheckpointerCopiesTheLog) {
  // With the writer's own checkpoints off, only the background thread moves
  // pages from the log into the database file.
  const std::string path = DbPath();
  SqliteOptions opts;
  opts.checkpoint_interval = absl::Milliseconds(10);
  opts.wal_reset_bytes = 0;
  opts.wal_limit_bytes = 0;
  auto s = SqliteStorage::Open(path, opts);
  ASSERT_TRUE(s.ok()) << s.status();
  const int64_t empty_db = FileBytes(path);
  const std::string blob(2000, 'x');
  std::vector<ReportRow> rows;
  for (uint64_t i = 1; i <= 1000; ++i) rows.push_back(Row("h", i, 1, blob));
  ASSERT_TRUE((*s)->WriteBatch(rows).ok());
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (FileBytes(path) < empty_db + (1 << 20) && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  EXPECT_GE(FileBytes(path), empty_db + (1 << 20))
      << "the checkpointer copied nothing into the database file";
}

TEST(SqliteStorageTest, DataSurvivesReopen) {
  std::string path = DbPath();
  {
    auto s = SqliteStorage::Open(path);
    ASSERT_TRUE(s.ok());
    std::vector<ReportRow> rows;
    for (uint64_t i = 1; i <= 500; ++i) rows.push_back(Row("h", i, i));
    ASSERT_TRUE((*s)->WriteBatch(rows).ok());
  }
  auto s = SqliteStorage::Open(path);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*(*s)->CountReports("h"), 500);
  EXPECT_EQ(*(*s)->SchemaVersion(), SqliteStorage::LatestSchemaVersion());
}

TEST(SqliteStorageTest, RetentionKeepsEachHostsLatest) {
  auto s = SqliteStorage::Open(DbPath());
  ASSERT_TRUE(s.ok());
  // In receive order, as the writer stores them.
  std::vector<ReportRow> rows = {Row("old", 1, 50), Row("old", 2, 60), Row("a", 1, 100),
                                 Row("a", 2, 200), Row("a", 3, 900)};
  ASSERT_TRUE((*s)->WriteBatch(rows).ok());
  auto deleted = (*s)->DeleteReportsReceivedBefore(500);
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  EXPECT_EQ(*deleted, 3);  // a@1, a@2, old@1; old@2 is old's latest
  EXPECT_EQ(*(*s)->CountReports("a"), 1);
  EXPECT_EQ(*(*s)->CountReports("old"), 1);
  EXPECT_TRUE((*s)->GetReport("old", 2).ok());
}

TEST(SqliteStorageTest, RetentionOverManyChunksDeletesExactlyTheOldRows) {
  auto s = SqliteStorage::Open(DbPath());
  ASSERT_TRUE(s.ok());
  // 100 hosts, 700 reports each, received one per time unit in order:
  // 70,000 rows, several deletion chunks.
  int64_t t = 0;
  for (uint64_t seq = 1; seq <= 700; ++seq) {
    std::vector<ReportRow> rows;
    for (int h = 0; h < 100; ++h) rows.push_back(Row("h" + std::to_string(h), seq, ++t, "b"));
    ASSERT_TRUE((*s)->WriteBatch(rows).ok());
  }
  // Rows received at 1..t; delete those before 45,001 (45,000 rows).
  auto deleted = (*s)->DeleteReportsReceivedBefore(45001 + 1);  // received = observed + 1
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  EXPECT_EQ(*deleted, 45000);
  EXPECT_EQ(*(*s)->CountReports(""), 25000);
  EXPECT_EQ(*(*s)->CountReports("h7"), 250);
  // Nothing is left to delete at the same cutoff; everything old goes with
  // a later one, except each host's newest report.
  EXPECT_EQ(*(*s)->DeleteReportsReceivedBefore(45002), 0);
  EXPECT_EQ(*(*s)->DeleteReportsReceivedBefore(int64_t{1} << 62), 24900);
  EXPECT_EQ(*(*s)->CountReports(""), 100);
  EXPECT_TRUE((*s)->GetReport("h42", 700).ok());
  // An empty table.
  auto empty = SqliteStorage::Open(DbPath());
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(*(*empty)->DeleteReportsReceivedBefore(1000), 0);
}

void Sql(const std::string& path, const char* sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(db);
}

TEST(SqliteStorageTest, MigratesOldSchemaKeepingData) {
  for (int version : {1, 3}) {
    SCOPED_TRACE(version);
    std::string path = DbPath();
    {
      SqliteOptions old;
      old.max_schema_version = version;
      auto s = SqliteStorage::Open(path, old);
      ASSERT_TRUE(s.ok()) << s.status();
      EXPECT_EQ(*(*s)->SchemaVersion(), version);
      EXPECT_TRUE(absl::IsFailedPrecondition((*s)->WriteBatch({Row("a", 1, 1)}).status()));
      // Version 1 has no alerts table.
      EXPECT_EQ((*s)->ListAlerts({}).ok(), version > 1);
    }
    // Rows as the server of that version wrote them: host a stored seqs
    // 1-3, 5 and 7 (two gaps), host b seq 4.
    Sql(path, R"sql(
INSERT INTO reports (host_id, seq, observed_at_ns, received_at_ns, worst_risk, report) VALUES
  ('a', 1, 10, 11, 1, 'a1'), ('a', 2, 20, 21, 1, 'a2'), ('b', 4, 25, 26, 1, 'b4'),
  ('a', 3, 30, 31, 1, 'a3'), ('a', 5, 50, 51, 1, 'a5'), ('a', 7, 70, 71, 2, 'a7');
INSERT INTO hosts VALUES ('a', 11, 71, 5, 7), ('b', 26, 26, 1, 4);
)sql");
    auto s = SqliteStorage::Open(path);
    ASSERT_TRUE(s.ok()) << s.status();
    EXPECT_EQ(*(*s)->SchemaVersion(), SqliteStorage::LatestSchemaVersion());
    EXPECT_EQ((*s)->ledger_rows_replayed(), 0);
    EXPECT_EQ(*(*s)->GetReport("a", 7), "a7");
    EXPECT_TRUE((*s)->ListAlerts({}).ok());
    std::map<std::string, LatestRow> latest;
    ASSERT_TRUE((*s)->LoadLatest([&](const LatestRow& r) { latest[r.host_id] = r; }).ok());
    ASSERT_EQ(latest.size(), 2u);
    EXPECT_EQ(latest["a"].latest_seq, 7u);
    EXPECT_EQ(latest["a"].blob, "a7");
    EXPECT_EQ(latest["a"].reports, 5u);
    EXPECT_EQ(latest["b"].blob, "b4");
    // The migrated seq runs know the gaps: old seqs are duplicates, the
    // missing ones are stored.
    auto out = (*s)->WriteBatch({Row("a", 1, 1), Row("a", 4, 1), Row("a", 5, 1), Row("a", 6, 1),
                                 Row("a", 8, 1), Row("b", 4, 1)});
    ASSERT_TRUE(out.ok()) << out.status();
    using W = WriteOutcome;
    EXPECT_EQ(*out, (std::vector<W>{W::kDuplicate, W::kStored, W::kDuplicate, W::kStored,
                                    W::kStored, W::kDuplicate}));
    EXPECT_EQ(*(*s)->CountReports("a"), 8);
  }
}

// A copy of the files taken between two commits: what a restart after
// kill -9 finds.
void CopyStore(const std::string& from, const std::string& to) {
  for (const char* suffix : {"", "-wal"}) {
    auto data = testing::ReadFile(from + suffix);
    if (data.ok()) ASSERT_TRUE(testing::WriteFile(to + suffix, *data).ok());
  }
}

TEST(SqliteStorageTest, LedgerIsRebuiltFromCheckpointAndLaterRows) {
  const std::string path = DbPath();
  SqliteOptions opts;
  opts.background_checkpoint = false;  // the files change only inside WriteBatch
  opts.ledger_checkpoint_rows = 1000;
  auto s = SqliteStorage::Open(path, opts);
  ASSERT_TRUE(s.ok()) << s.status();
  // 5 hosts x 500 seqs; host h4 skips every tenth seq.
  std::vector<ReportRow> all;
  int64_t t = 0;
  for (uint64_t seq = 1; seq <= 500; ++seq) {
    for (int h = 0; h < 5; ++h) {
      if (h == 4 && seq % 10 == 0) continue;
      all.push_back(Row("h" + std::to_string(h), seq, ++t));
    }
  }
  for (size_t i = 0; i < all.size(); i += 100) {
    std::vector<ReportRow> batch(all.begin() + i, all.begin() + std::min(all.size(), i + 100));
    ASSERT_TRUE((*s)->WriteBatch(batch).ok());
  }
  const std::string copy = DbPath();
  CopyStore(path, copy);
  s->reset();

  auto c = SqliteStorage::Open(copy, opts);
  ASSERT_TRUE(c.ok()) << c.status();
  // 2450 rows; the checkpoints covered the first 2000.
  EXPECT_EQ((*c)->ledger_rows_replayed(), 450);
  std::map<std::string, LatestRow> latest;
  ASSERT_TRUE((*c)->LoadLatest([&](const LatestRow& r) { latest[r.host_id] = r; }).ok());
  ASSERT_EQ(latest.size(), 5u);
  EXPECT_EQ(latest["h0"].latest_seq, 500u);
  EXPECT_EQ(latest["h0"].reports, 500u);
  EXPECT_EQ(latest["h0"].first_seen_ns, 2);
  EXPECT_EQ(latest["h0"].blob, "blob500");
  EXPECT_EQ(latest["h4"].latest_seq, 499u);
  EXPECT_EQ(latest["h4"].reports, 450u);
  // Every stored (host, seq) is a duplicate; h4's skipped seqs are new.
  auto again = (*c)->WriteBatch(all);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(std::count(again->begin(), again->end(), WriteOutcome::kDuplicate),
            static_cast<long>(all.size()));
  auto late = (*c)->WriteBatch({Row("h4", 10, 1), Row("h4", 500, 1), Row("h4", 20, 1)});
  ASSERT_TRUE(late.ok());
  EXPECT_EQ(std::count(late->begin(), late->end(), WriteOutcome::kStored), 3);
  EXPECT_EQ(*(*c)->CountReports(""), 2453);
}

TEST(SqliteStorageTest, FailedBatchLeavesNoSeqsBehind) {
  const std::string path = DbPath();
  auto s = SqliteStorage::Open(path);
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_TRUE((*s)->WriteBatch({Row("a", 1, 1)}).ok());
  Sql(path,
      "CREATE TRIGGER refuse BEFORE INSERT ON reports WHEN NEW.seq = 4 "
      "BEGIN SELECT RAISE(ABORT, 'refused'); END");
  // a@2 and a@3 are inserted, then a@4 fails the whole transaction.
  EXPECT_FALSE((*s)->WriteBatch({Row("a", 2, 2), Row("a", 3, 3), Row("a", 4, 4)}).ok());
  Sql(path, "DROP TRIGGER refuse");
  // The rolled-back seqs must not count as stored.
  auto out = (*s)->WriteBatch({Row("a", 2, 2), Row("a", 3, 3), Row("a", 1, 1)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, (std::vector<WriteOutcome>{WriteOutcome::kStored, WriteOutcome::kStored,
                                              WriteOutcome::kDuplicate}));
  EXPECT_EQ(*(*s)->CountReports("a"), 3);
}

TEST(SqliteStorageTest, RefusesNewerSchema) {
  std::string path = DbPath();
  {
    auto s = SqliteStorage::Open(path);
    ASSERT_TRUE(s.ok());
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "INSERT INTO schema_version VALUES (999)", nullptr,
                         nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  auto s = SqliteStorage::Open(path);
  EXPECT_TRUE(absl::IsFailedPrecondition(s.status())) << s.status();
}

TEST(SqliteStorageTest, RejectsFileThatIsNotADatabase) {
  std::string path = DbPath();
  ASSERT_TRUE(testing::WriteFile(path, std::string(8192, 'x')).ok());
  EXPECT_FALSE(SqliteStorage::Open(path).ok());
}

TEST(SqliteStorageTest, AlertsRoundTripAndFilter) {
  auto s = SqliteStorage::Open(DbPath());
  ASSERT_TRUE(s.ok());
  AlertRow firing;
  firing.rule = "AttachStall";
  firing.host_id = "a";
  firing.state = 2;
  firing.severity = "critical";
  firing.labels = {{"role", "db"}};
  firing.annotations = {{"summary", "stall"}};
  firing.value = 31.5;
  firing.active_since_ns = 1000;
  firing.fired_at_ns = 2000;
  AlertRow resolved = firing;
  resolved.host_id = "b";
  resolved.state = 3;
  resolved.resolved_at_ns = 3000;
  ASSERT_TRUE((*s)->PutAlert(firing).ok());
  ASSERT_TRUE((*s)->PutAlert(resolved).ok());
  auto active = (*s)->ListAlerts({});
  ASSERT_TRUE(active.ok()) << active.status();
  ASSERT_EQ(active->size(), 1u);
  EXPECT_EQ((*active)[0].host_id, "a");
  EXPECT_EQ((*active)[0].labels.at("role"), "db");
  EXPECT_EQ((*active)[0].annotations.at("summary"), "stall");
  EXPECT_EQ(*(*active)[0].fired_at_ns, 2000);
  EXPECT_FALSE((*active)[0].resolved_at_ns.has_value());
  AlertFilter f;
  f.states = {3};
  auto res = (*s)->ListAlerts(f);
  ASSERT_EQ(res->size(), 1u);
  EXPECT_EQ(*(*res)[0].resolved_at_ns, 3000);
  f.states = {};
  f.host_id = "b";
  EXPECT_TRUE((*s)->ListAlerts(f)->empty());
}

}  // namespace
}  // namespace tracehealth::server
