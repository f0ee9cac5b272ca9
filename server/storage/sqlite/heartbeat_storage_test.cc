// Heartbeats in the SQLite store, through SqliteStorage on real files, with
// rows made by the ingest path (MakeReportRow) from realistic reports: the
// heartbeat conformance suite (server/storage/conformance/
// heartbeat_conformance.h), and what a restart after a crash finds.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "proto/tracehealth/v1/report.pb.h"
#include "server/ingest/report_row.h"
#include "server/report/report_head.h"
#include "server/storage/conformance/heartbeat_conformance.h"
#include "server/storage/sqlite/sqlite_storage.h"
#include "server/storage/sqlite/sqlite_test_util.h"
#include "tests/util/subprocess.h"
#include "tools/loadgen/sample_report.h"

namespace tracehealth::server {
namespace {

std::unique_ptr<SqliteStorage> Open(const std::string& path,
                                    absl::Duration interval) {
  SqliteOptions opts;
  opts.background_checkpoint = false;  // the files change only in WriteBatch
  opts.full_report_interval = interval;
  auto s = SqliteStorage::Open(path, opts);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? std::move(*s) : nullptr;
}

std::vector<WriteOutcome> Write(SqliteStorage& s,
                                const std::vector<v1::HostReport>& reports) {
  std::vector<ReportRow> rows;
  for (const v1::HostReport& r : reports) rows.push_back(HeartbeatRow(r));
  auto out = s.WriteBatch(rows);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *out : std::vector<WriteOutcome>{};
}

int64_t FullRows(const std::string& path) {
  return SqlInt(path, "SELECT count(*) FROM reports");
}

absl::StatusOr<OpenedHeartbeatStore> OpenForConformance(
    absl::Duration interval) {
  const std::string path = NewDbPath();
  OpenedHeartbeatStore out;
  out.store = Open(path, interval);
  if (out.store == nullptr) return absl::InternalError("cannot open");
  out.full_reports = [path] { return FullRows(path); };
  out.chunks = [path] {
    return SqlInt(path, "SELECT count(*) FROM heartbeats");
  };
  return out;
}

INSTANTIATE_TEST_SUITE_P(Sqlite, HeartbeatConformance,
                         ::testing::Values(HeartbeatBackend{
                             "sqlite", OpenForConformance}),
                         HeartbeatBackendName);

// What a restart after kill -9 finds (a copy of the files between two
// commits, the ledger not checkpointed since the first row): the heartbeats
// are recognized, the next report is stored whole.
TEST(HeartbeatStorageTest, HeartbeatsAreRecognizedAfterACrash) {
  const std::string path = NewDbPath();
  auto s = Open(path, absl::Hours(6));
  std::vector<v1::HostReport> reports;
  for (uint64_t seq = 1; seq <= 10; ++seq)
    reports.push_back(HeartbeatReport(seq));
  for (const v1::HostReport& r : reports) Write(*s, {r});
  const std::string copy = NewDbPath();
  for (const char* suffix : {"", "-wal"}) {
    auto data = testing::ReadFile(path + suffix);
    if (data.ok()) {
      ASSERT_TRUE(testing::WriteFile(copy + suffix, *data).ok());
    }
  }
  s.reset();
  auto c = Open(copy, absl::Hours(6));
  std::map<std::string, LatestRow> latest;
  ASSERT_TRUE(c->LoadLatest([&](LatestRow& r) { latest[r.host_id] = r; }).ok());
  EXPECT_EQ(latest["h"].latest_seq, 10u);
  EXPECT_EQ(latest["h"].reports, 10u);
  EXPECT_FALSE(latest["h"].record.empty());  // the full report's
  std::vector<WriteOutcome> again = Write(*c, reports);
  EXPECT_EQ(std::count(again.begin(), again.end(), WriteOutcome::kDuplicate),
            10);
  EXPECT_EQ(Write(*c, {HeartbeatReport(11)}),
            std::vector<WriteOutcome>{WriteOutcome::kStored});
  EXPECT_EQ(FullRows(copy), 2);
  EXPECT_EQ(*c->CountReports("h"), 11);
}

}  // namespace
}  // namespace tracehealth::server
