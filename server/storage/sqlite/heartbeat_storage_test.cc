// Heartbeats in the SQLite store, through SqliteStorage on real files, with
// rows made by the ingest path (MakeReportRow) from realistic reports.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "proto/tracehealth/v1/report.pb.h"
#include "server/ingest/report_row.h"
#include "server/report/report_head.h"
#include "server/storage/sqlite/sqlite_storage.h"
#include "server/storage/sqlite/sqlite_test_util.h"
#include "tests/util/subprocess.h"
#include "tools/loadgen/sample_report.h"

namespace tracehealth::server {
namespace {

const absl::Time kStart = absl::FromUnixSeconds(1800000000);

// Report `seq` of host h: 15 s apart, threads wandering by a few.
v1::HostReport Report(uint64_t seq, const std::string& release = "6.16.3") {
  SampleHost h;
  h.host_id = "h";
  h.threads = 20000 + (seq * 7) % 13;
  h.kernel_release = release;
  return SampleReport(
      h, seq, kStart + absl::Seconds(15 * seq) + absl::Milliseconds(seq % 3));
}

ReportRow Row(const v1::HostReport& r) {
  const std::string blob = r.SerializeAsString();
  absl::StatusOr<ReportHead> head = DecodeReportHead(blob);
  EXPECT_TRUE(head.ok());
  return MakeReportRow(*head, blob,
                       kStart + absl::Seconds(15 * r.seq()) +
                           absl::Milliseconds(2 + r.seq() % 5));
}

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
  for (const v1::HostReport& r : reports) rows.push_back(Row(r));
  auto out = s.WriteBatch(rows);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *out : std::vector<WriteOutcome>{};
}

int64_t FullRows(const std::string& path) {
  return SqlInt(path, "SELECT count(*) FROM reports");
}

TEST(HeartbeatStorageTest, SteadyReportsAreHeartbeatsAndReadBackWhole) {
  const std::string path = NewDbPath();
  auto s = Open(path, absl::Hours(6));
  std::vector<v1::HostReport> reports;
  for (uint64_t seq = 1; seq <= 10; ++seq) reports.push_back(Report(seq));
  // One batch of five, then one by one.
  Write(*s, {reports.begin(), reports.begin() + 5});
  for (size_t i = 5; i < reports.size(); ++i) Write(*s, {reports[i]});
  EXPECT_EQ(FullRows(path), 1);
  EXPECT_EQ(SqlInt(path, "SELECT count(*) FROM heartbeats"), 1);
  EXPECT_EQ(*s->CountReports("h"), 10);
  EXPECT_EQ(*s->CountReports(""), 10);
  // Every seq reads back with its own seq, time, threads and latency.
  for (const v1::HostReport& want : reports) {
    SCOPED_TRACE(want.seq());
    absl::StatusOr<std::string> blob = s->GetReport("h", want.seq());
    ASSERT_TRUE(blob.ok()) << blob.status();
    v1::HostReport got;
    ASSERT_TRUE(got.ParseFromString(*blob));
    EXPECT_EQ(got.seq(), want.seq());
    EXPECT_EQ(got.observed_at().seconds(), want.observed_at().seconds());
    EXPECT_EQ(got.observed_at().nanos(), want.observed_at().nanos());
    EXPECT_EQ(got.snapshot().threads().total(),
              want.snapshot().threads().total());
    for (int i = 0; i < got.predictions().attach_size(); ++i) {
      // Every probe kind's prediction names the heartbeat's threads.
      EXPECT_EQ(got.predictions().attach(i).threads_total(),
                want.predictions().attach(i).threads_total());
      if (got.predictions().attach(i).probe_kind() ==
          v1::PROBE_KIND_KPROBE_MULTI_RETURN) {
        EXPECT_EQ(got.predictions().attach(i).latency_seconds(),
                  want.predictions().attach(i).latency_seconds());
      }
    }
    EXPECT_EQ(got.snapshot().kernel().release(), "6.16.3");
  }
  EXPECT_EQ(s->GetReport("h", 11).status().code(), absl::StatusCode::kNotFound);
}

TEST(HeartbeatStorageTest, MaterialChangeIsStoredWhole) {
  const std::string path = NewDbPath();
  auto s = Open(path, absl::Hours(6));
  Write(*s, {Report(1), Report(2), Report(3, "6.17.1"), Report(4, "6.17.1")});
  // 1 whole, 2 a heartbeat, 3 whole (its kernel), 4 a heartbeat of 3.
  EXPECT_EQ(FullRows(path), 2);
  EXPECT_EQ(SqlInt(path, "SELECT count(*) FROM heartbeats"), 2);
  v1::HostReport got;
  ASSERT_TRUE(got.ParseFromString(*s->GetReport("h", 4)));
  EXPECT_EQ(got.snapshot().kernel().release(), "6.17.1");
  ASSERT_TRUE(got.ParseFromString(*s->GetReport("h", 2)));
  EXPECT_EQ(got.snapshot().kernel().release(), "6.16.3");
}

TEST(HeartbeatStorageTest, FullReportAtLeastEveryInterval) {
  const std::string path = NewDbPath();
  // A full report at least every 60 s: a report received 60 s - 1 ns after
  // the full one is a heartbeat, one received 60 s after it is whole.
  auto s = Open(path, absl::Seconds(60));
  const int64_t t0 = absl::ToUnixNanos(kStart);
  const int64_t kMinute = 60000000000;
  const std::vector<std::pair<uint64_t, int64_t>> received = {
      {1, t0},                    // whole: the first
      {2, t0 + kMinute - 1},      // heartbeat
      {3, t0 + kMinute},          // whole: the interval has passed
      {4, t0 + 2 * kMinute - 1},  // heartbeat of 3
      {5, t0 + 2 * kMinute},      // whole
  };
  for (const auto& [seq, at] : received) {
    ReportRow row = Row(Report(seq));
    row.received_at_ns = at;
    ASSERT_TRUE(s->WriteBatch({row}).ok());
  }
  EXPECT_EQ(FullRows(path), 3);
  EXPECT_EQ(SqlInt(path, "SELECT sum(seq) FROM reports"), 1 + 3 + 5);
  EXPECT_EQ(*s->CountReports("h"), 5);
}

TEST(HeartbeatStorageTest, ZeroIntervalStoresEveryReportWhole) {
  const std::string path = NewDbPath();
  auto s = Open(path, absl::ZeroDuration());
  for (uint64_t seq = 1; seq <= 5; ++seq) Write(*s, {Report(seq)});
  EXPECT_EQ(FullRows(path), 5);
  EXPECT_EQ(SqlInt(path, "SELECT count(*) FROM heartbeats"), 0);
}

TEST(HeartbeatStorageTest, ReplayedHeartbeatStoresNothingTwice) {
  const std::string path = NewDbPath();
  auto s = Open(path, absl::Hours(6));
  std::vector<v1::HostReport> reports;
  for (uint64_t seq = 1; seq <= 5; ++seq) reports.push_back(Report(seq));
  Write(*s, reports);
  const int64_t bytes =
      SqlInt(path, "SELECT sum(length(beats)) FROM heartbeats");
  // 3..5 again (an agent that lost the acks), then 3 alone.
  std::vector<WriteOutcome> again =
      Write(*s, {reports[2], reports[3], reports[4]});
  EXPECT_EQ(std::count(again.begin(), again.end(), WriteOutcome::kDuplicate),
            3);
  again = Write(*s, {reports[2]});
  EXPECT_EQ(again, std::vector<WriteOutcome>{WriteOutcome::kDuplicate});
  EXPECT_EQ(SqlInt(path, "SELECT sum(length(beats)) FROM heartbeats"), bytes);
  EXPECT_EQ(FullRows(path), 1);
  EXPECT_EQ(*s->CountReports("h"), 5);
}

// What a restart after kill -9 finds (a copy of the files between two
// commits, the ledger not checkpointed since the first row): the heartbeats
// are recognized, the next report is stored whole.
TEST(HeartbeatStorageTest, HeartbeatsAreRecognizedAfterACrash) {
  const std::string path = NewDbPath();
  auto s = Open(path, absl::Hours(6));
  std::vector<v1::HostReport> reports;
  for (uint64_t seq = 1; seq <= 10; ++seq) reports.push_back(Report(seq));
  for (const v1::HostReport& r : reports) Write(*s, {r});
  const std::string copy = NewDbPath();
  for (const char* suffix : {"", "-wal"}) {
    auto data = testing::ReadFile(path + suffix);
    if (data.ok()) ASSERT_TRUE(testing::WriteFile(copy + suffix, *data).ok());
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
  EXPECT_EQ(Write(*c, {Report(11)}),
            std::vector<WriteOutcome>{WriteOutcome::kStored});
  EXPECT_EQ(FullRows(copy), 2);
  EXPECT_EQ(*c->CountReports("h"), 11);
}

// Retention deletes a chunk once its last heartbeat is older than the
// cutoff (and it does not hold the host's newest seq), and a full report
// once no chunk on it is left.
TEST(HeartbeatStorageTest, RetentionOfFullReportsAndHeartbeats) {
  const std::string path = NewDbPath();
  auto s = Open(path, absl::Hours(6));
  // 1 whole, 2-5 heartbeats of 1 (received 30-75 s), 6 whole (a new
  // kernel, 90 s), 7-10 heartbeats of 6 (105-150 s).
  std::vector<v1::HostReport> reports;
  for (uint64_t seq = 1; seq <= 10; ++seq)
    reports.push_back(Report(seq, seq >= 6 ? "6.17.1" : "6.16.3"));
  for (const v1::HostReport& r : reports) Write(*s, {r});
  ASSERT_EQ(FullRows(path), 2);
  const int64_t t0 = absl::ToUnixNanos(kStart);
  // At 100 s: 1-5 go (6 is older but 7-10 are on it).
  auto deleted = s->DeleteReportsReceivedBefore(t0 + 100000000000);
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  EXPECT_EQ(*deleted, 5);
  EXPECT_EQ(*s->CountReports("h"), 5);
  EXPECT_EQ(SqlInt(path, "SELECT min(seq) FROM reports"), 6);
  EXPECT_EQ(s->GetReport("h", 3).status().code(), absl::StatusCode::kNotFound);
  v1::HostReport got;
  ASSERT_TRUE(got.ParseFromString(*s->GetReport("h", 8)));
  EXPECT_EQ(got.seq(), 8u);
  // Past everything: the chunk holding the newest seq, and its full report,
  // stay.
  deleted = s->DeleteReportsReceivedBefore(t0 + 1000000000000);
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  EXPECT_EQ(*deleted, 0);
  EXPECT_EQ(*s->CountReports("h"), 5);
  ASSERT_TRUE(got.ParseFromString(*s->GetReport("h", 10)));
  EXPECT_EQ(got.snapshot().kernel().release(), "6.17.1");
  // The host's next report is still a heartbeat of 6.
  Write(*s, {Report(11, "6.17.1")});
  EXPECT_EQ(FullRows(path), 1);
}

}  // namespace
}  // namespace tracehealth::server
