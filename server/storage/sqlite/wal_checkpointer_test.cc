// The write-ahead log's upkeep, through SqliteStorage on real files.
#include "server/storage/sqlite/wal_checkpointer.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "server/storage/conformance/test_rows.h"
#include "server/storage/sqlite/sqlite_storage.h"
#include "server/storage/sqlite/sqlite_test_util.h"

namespace tracehealth::server {
namespace {

TEST(WalCheckpointerTest, WriteAheadLogStartsOverInsteadOfGrowing) {
  // 40 MB of rows written back to back, with the background checkpointer
  // effectively off: the writer's own checkpoints must keep the log near
  // wal_reset_bytes.
  const std::string path = NewDbPath();
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
    for (int i = 0; i < 100; ++i) {
      rows.push_back(TestRow("h" + std::to_string(i), ++seq, 1, blob));
    }
    ASSERT_TRUE((*s)->WriteBatch(rows).ok());
    largest_wal = std::max(largest_wal, FileBytes(path + "-wal"));
  }
  EXPECT_EQ(*(*s)->CountReports(""), 20000);
  EXPECT_GT(largest_wal, 0);
  EXPECT_LT(largest_wal, 4 << 20) << "the log grew instead of starting over";
}

TEST(WalCheckpointerTest, BackgroundCheckpointerCopiesTheLog) {
  // With the writer's own checkpoints off, only the background thread moves
  // pages from the log into the database file.
  const std::string path = NewDbPath();
  SqliteOptions opts;
  opts.checkpoint_interval = absl::Milliseconds(10);
  opts.wal_reset_bytes = 0;
  opts.wal_limit_bytes = 0;
  auto s = SqliteStorage::Open(path, opts);
  ASSERT_TRUE(s.ok()) << s.status();
  const int64_t empty_db = FileBytes(path);
  const std::string blob(2000, 'x');
  std::vector<ReportRow> rows;
  for (uint64_t i = 1; i <= 1000; ++i) rows.push_back(TestRow("h", i, 1, blob));
  ASSERT_TRUE((*s)->WriteBatch(rows).ok());
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (FileBytes(path) < empty_db + (1 << 20) && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  EXPECT_GE(FileBytes(path), empty_db + (1 << 20))
      << "the checkpointer copied nothing into the database file";
}

}  // namespace
}  // namespace tracehealth::server
