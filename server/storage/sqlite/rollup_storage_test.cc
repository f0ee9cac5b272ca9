// Hourly rollups in the SQLite store, through SqliteStorage on real files:
// the rollup conformance suite (server/storage/conformance/
// rollup_conformance.h), and the watermark check of a pass's write.
#include <sqlite3.h>

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "server/storage/conformance/rollup_conformance.h"
#include "server/storage/sqlite/rollups.h"
#include "server/storage/sqlite/sqlite_storage.h"
#include "server/storage/sqlite/sqlite_test_util.h"

namespace tracehealth::server {
namespace {

absl::StatusOr<std::unique_ptr<ReportStore>> OpenPath(const std::string& path) {
  SqliteOptions opts;
  opts.background_checkpoint = false;
  auto s = SqliteStorage::Open(path, opts);
  if (!s.ok()) return s.status();
  return std::unique_ptr<ReportStore>(*std::move(s));
}

absl::StatusOr<OpenedRollupStore> OpenForConformance() {
  const std::string path = NewDbPath();
  OpenedRollupStore out;
  absl::StatusOr<std::unique_ptr<ReportStore>> s = OpenPath(path);
  if (!s.ok()) return s.status();
  out.store = *std::move(s);
  out.reopen = [path] { return OpenPath(path); };
  return out;
}

INSTANTIATE_TEST_SUITE_P(Sqlite, RollupConformance,
                         ::testing::Values(RollupBackend{"sqlite",
                                                         OpenForConformance}),
                         RollupBackendName);

}  // namespace
}  // namespace tracehealth::server

namespace tracehealth::server {
namespace {

RollupRow OneRow(int64_t hour) {
  RollupRow r;
  r.host_id = "h";
  r.hour_start_ns = hour;
  r.reports = 1;
  r.first_seq = r.last_seq = 1;
  return r;
}

// WriteRollups writes only over the watermark it was given: a pass that
// lost the race to another writes nothing (Aborted).
TEST(SqliteRollupsTest, WritesOnlyOverTheExpectedWatermark) {
  const std::string path = NewDbPath();
  ASSERT_TRUE(OpenPath(path).ok());  // the schema
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  const int64_t h = kRollupHourNs;
  EXPECT_TRUE(WriteRollups(db, std::nullopt, 2 * h, {OneRow(h)}).ok());
  EXPECT_EQ(*ReadRollupWatermark(db), 2 * h);
  // Another pass that also started without a watermark, or from another.
  EXPECT_EQ(WriteRollups(db, std::nullopt, 3 * h, {OneRow(2 * h)}).code(),
            absl::StatusCode::kAborted);
  EXPECT_EQ(WriteRollups(db, h, 3 * h, {OneRow(2 * h)}).code(),
            absl::StatusCode::kAborted);
  EXPECT_EQ(*ReadRollupWatermark(db), 2 * h);
  EXPECT_EQ(ReadRollups(db, "h", 0, 10 * h)->size(), 1u);
  EXPECT_TRUE(WriteRollups(db, 2 * h, 3 * h, {OneRow(2 * h)}).ok());
  EXPECT_EQ(*ReadRollupWatermark(db), 3 * h);
  EXPECT_EQ(ReadRollups(db, "h", 0, 10 * h)->size(), 2u);
  sqlite3_close(db);
}

}  // namespace
}  // namespace tracehealth::server
