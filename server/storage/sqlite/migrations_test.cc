// Schema migrations, through SqliteStorage::Open on real files.
#include "server/storage/sqlite/migrations.h"

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "server/storage/conformance/test_rows.h"
#include "server/storage/heartbeat_chunk.h"
#include "server/storage/sqlite/sqlite_storage.h"
#include "server/storage/sqlite/sqlite_test_util.h"
#include "tests/util/subprocess.h"

namespace tracehealth::server {
namespace {

TEST(MigrationsTest, MigratesOldSchemaKeepingData) {
  for (int version : {1, 3}) {
    SCOPED_TRACE(version);
    std::string path = NewDbPath();
    {
      SqliteOptions old;
      old.max_schema_version = version;
      auto s = SqliteStorage::Open(path, old);
      ASSERT_TRUE(s.ok()) << s.status();
      EXPECT_EQ(*(*s)->SchemaVersion(), version);
      EXPECT_TRUE(absl::IsFailedPrecondition(
          (*s)->WriteBatch({TestRow("a", 1, 1)}).status()));
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
    EXPECT_EQ(*(*s)->SchemaVersion(), LatestSchemaVersion());
    EXPECT_EQ((*s)->ledger_rows_replayed(), 0);
    EXPECT_EQ(*(*s)->GetReport("a", 7), "a7");
    EXPECT_TRUE((*s)->ListAlerts({}).ok());
    std::map<std::string, LatestRow> latest;
    ASSERT_TRUE(
        (*s)->LoadLatest([&](const LatestRow& r) { latest[r.host_id] = r; })
            .ok());
    ASSERT_EQ(latest.size(), 2u);
    EXPECT_EQ(latest["a"].latest_seq, 7u);
    EXPECT_EQ(latest["a"].blob, "a7");
    EXPECT_EQ(latest["a"].reports, 5u);
    EXPECT_EQ(latest["b"].blob, "b4");
    // The migrated seq runs know the gaps: old seqs are duplicates, the
    // missing ones are stored.
    auto out = (*s)->WriteBatch({TestRow("a", 1, 1), TestRow("a", 4, 1),
                                 TestRow("a", 5, 1), TestRow("a", 6, 1),
                                 TestRow("a", 8, 1), TestRow("b", 4, 1)});
    ASSERT_TRUE(out.ok()) << out.status();
    using W = WriteOutcome;
    EXPECT_EQ(*out, (std::vector<W>{W::kDuplicate, W::kStored, W::kDuplicate,
                                    W::kStored, W::kStored, W::kDuplicate}));
    EXPECT_EQ(*(*s)->CountReports("a"), 8);
  }
}

TEST(MigrationsTest, RowsFromBeforeRecordsLoadTheirReports) {
  // A store at schema 7 (before the records table), its rows as that
  // server wrote them (the ledger checkpoint covers none of them: they are
  // replayed from reports).
  std::string path = NewDbPath();
  {
    SqliteOptions old;
    old.max_schema_version = 7;
    auto s = SqliteStorage::Open(path, old);
    ASSERT_TRUE(s.ok()) << s.status();
    EXPECT_EQ(*(*s)->SchemaVersion(), 7);
  }
  Sql(path, R"sql(
INSERT INTO reports (host_id, seq, observed_at_ns, received_at_ns, worst_risk, report) VALUES
  ('a', 1, 10, 11, 1, 'a1'), ('b', 1, 20, 21, 1, 'b1'), ('a', 2, 30, 31, 1, 'a2');
)sql");
  auto s = SqliteStorage::Open(path);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(LatestSchemaVersion(), 10);
  EXPECT_EQ(*(*s)->SchemaVersion(), 10);
  EXPECT_EQ((*s)->ledger_rows_replayed(), 3);
  auto load = [&s] {
    std::map<std::string, LatestRow> latest;
    EXPECT_TRUE(
        (*s)->LoadLatest([&](const LatestRow& r) { latest[r.host_id] = r; })
            .ok());
    return latest;
  };
  std::map<std::string, LatestRow> latest = load();
  ASSERT_EQ(latest.size(), 2u);
  EXPECT_EQ(latest["a"].latest_seq, 2u);
  EXPECT_EQ(latest["a"].record, "");
  EXPECT_EQ(latest["a"].blob, "a2");
  EXPECT_EQ(latest["b"].blob, "b1");
  // A report stored now has its record, which a load gives instead.
  ReportRow a3 = TestRow("a", 3, 40);
  a3.record = "rec-a3";
  ASSERT_TRUE((*s)->WriteBatch({a3}).ok());
  latest = load();
  EXPECT_EQ(latest["a"].latest_seq, 3u);
  EXPECT_EQ(latest["a"].record, "rec-a3");
  EXPECT_EQ(latest["a"].blob, "");
  EXPECT_EQ(latest["b"].blob, "b1");
  EXPECT_EQ(*(*s)->GetReport("a", 3), "blob3");
}

TEST(MigrationsTest, StoreFromBeforeHeartbeatsGetsTheTable) {
  // A store at schema 8 with rows; at the latest schema it has the
  // heartbeats table (empty) and its rows read as before.
  std::string path = NewDbPath();
  {
    SqliteOptions old;
    old.max_schema_version = 8;
    auto s = SqliteStorage::Open(path, old);
    ASSERT_TRUE(s.ok()) << s.status();
  }
  Sql(path, R"sql(
INSERT INTO reports (host_id, seq, observed_at_ns, received_at_ns, worst_risk, report) VALUES
  ('a', 1, 10, 11, 1, 'a1'), ('a', 2, 30, 31, 1, 'a2');
)sql");
  EXPECT_EQ(SqlInt(path,
                   "SELECT count(*) FROM sqlite_master WHERE name = "
                   "'heartbeats'"),
            0);
  auto s = SqliteStorage::Open(path);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(*(*s)->SchemaVersion(), 10);
  EXPECT_EQ(SqlInt(path, "SELECT count(*) FROM heartbeats"), 0);
  EXPECT_EQ(*(*s)->CountReports("a"), 2);
  EXPECT_EQ(*(*s)->GetReport("a", 2), "a2");
}

TEST(MigrationsTest, StoreFromBeforeRollupsGetsTheTables) {
  // A store at schema 9 with a row; at 10 it has the rollup tables, empty
  // and without a watermark, so its first pass starts at the row's hour.
  std::string path = NewDbPath();
  {
    SqliteOptions old;
    old.max_schema_version = 9;
    auto s = SqliteStorage::Open(path, old);
    ASSERT_TRUE(s.ok()) << s.status();
  }
  Sql(path, R"sql(
INSERT INTO reports (host_id, seq, observed_at_ns, received_at_ns, worst_risk, report) VALUES
  ('a', 1, 7200000000000, 7200000000001, 2, 'a1');
)sql");
  auto s = SqliteStorage::Open(path);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(*(*s)->SchemaVersion(), 10);
  EXPECT_EQ(SqlInt(path, "SELECT count(*) FROM rollups"), 0);
  EXPECT_EQ(SqlInt(path, "SELECT count(*) FROM rollup_state"), 0);
  // Hour 2 (7,200 s) is the oldest; hours 2 and 3 end by 4 h.
  auto pass = (*s)->RollUp(4 * 3600000000000LL, 24);
  ASSERT_TRUE(pass.ok()) << pass.status();
  EXPECT_EQ(pass->hours, 2);
  EXPECT_EQ(pass->rows, 1);
  EXPECT_EQ(pass->rolled_through_ns, 4 * 3600000000000LL);
  EXPECT_EQ(SqlInt(path, "SELECT worst_risk_max FROM rollups"), 2);
}

TEST(MigrationsTest, ChunksFromBeforeTheSpanBoundAreStillRolledUp) {
  // A store at schema 9 with a chunk whose beats span two hours (chunks
  // were bounded by count only): at 10 heartbeat_spans names its first
  // beat, and a pass finds its beat of hour 2, though the chunk starts more
  // than an hour before that hour.
  constexpr int64_t kH = 3600000000000LL;
  std::string path = NewDbPath();
  {
    SqliteOptions old;
    old.max_schema_version = 9;
    auto s = SqliteStorage::Open(path, old);
    ASSERT_TRUE(s.ok()) << s.status();
  }
  std::string chunk;
  ChunkEncoder enc;
  for (uint64_t seq = 2; seq <= 4; ++seq) {
    Beat b;
    b.seq = seq;
    b.observed_at_ns = (2 * static_cast<int64_t>(seq) - 3) * kH / 2;  // :30
    b.received_at_ns = b.observed_at_ns + 1;
    b.threads = 10 * seq;
    chunk += seq == 2 ? enc.Start(b) : enc.Append(b);
  }
  std::string hex;
  for (unsigned char c : chunk) absl::StrAppendFormat(&hex, "%02X", c);
  Sql(path, absl::StrCat(R"sql(
INSERT INTO reports (id, host_id, seq, observed_at_ns, received_at_ns, worst_risk, report) VALUES
  (1, 'a', 1, 0, 1, 2, 'a1');
INSERT INTO heartbeats (host_id, base_id, first_seq, last_seq, first_observed_ns,
  last_observed_ns, last_received_ns, beats) VALUES
  ('a', 1, 2, 4, )sql",
                         kH / 2, ", ", 5 * kH / 2, ", ", 5 * kH / 2 + 1, ", X'",
                         hex, "');"));
  auto s = SqliteStorage::Open(path);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(SqlInt(path, "SELECT unbounded_through_ns FROM heartbeat_spans"),
            kH / 2);
  auto pass = (*s)->RollUp(3 * kH, 24);
  ASSERT_TRUE(pass.ok()) << pass.status();
  EXPECT_EQ(pass->hours, 3);
  auto rows = (*s)->ReadHostRollups("a", 0, 3 * kH);
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 3u);
  EXPECT_EQ((*rows)[0].reports, 2);  // the full report and seq 2
  EXPECT_EQ((*rows)[1].reports, 1);
  EXPECT_EQ((*rows)[2].reports, 1);
  EXPECT_EQ((*rows)[2].last_seq, 4u);
  EXPECT_EQ((*rows)[2].threads.last, std::optional<uint64_t>(40));
}

TEST(MigrationsTest, ANewStoreHasNoUnboundedChunks) {
  std::string path = NewDbPath();
  auto s = SqliteStorage::Open(path);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(SqlInt(path,
                   "SELECT count(*) FROM heartbeat_spans "
                   "WHERE unbounded_through_ns IS NULL"),
            1);
}

TEST(MigrationsTest, RefusesNewerSchema) {
  std::string path = NewDbPath();
  {
    auto s = SqliteStorage::Open(path);
    ASSERT_TRUE(s.ok());
  }
  Sql(path, "INSERT INTO schema_version VALUES (999)");
  auto s = SqliteStorage::Open(path);
  EXPECT_TRUE(absl::IsFailedPrecondition(s.status())) << s.status();
  EXPECT_NE(s.status().message().find("schema version 999 is newer"),
            std::string::npos)
      << s.status();
}

TEST(MigrationsTest, RejectsFileThatIsNotADatabase) {
  std::string path = NewDbPath();
  ASSERT_TRUE(testing::WriteFile(path, std::string(8192, 'x')).ok());
  auto s = SqliteStorage::Open(path);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("file is not a database"),
            std::string::npos)
      << s.status();
}

}  // namespace
}  // namespace tracehealth::server
