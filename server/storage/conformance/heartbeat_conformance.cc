#include "server/storage/conformance/heartbeat_conformance.h"

#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "proto/tracehealth/v1/report.pb.h"
#include "server/ingest/report_row.h"
#include "server/report/report_head.h"
#include "tools/loadgen/sample_report.h"

namespace tracehealth::server {

void PrintTo(const HeartbeatBackend& backend, std::ostream* os) {
  *os << backend.name;
}

std::string HeartbeatBackendName(
    const ::testing::TestParamInfo<HeartbeatBackend>& info) {
  return info.param.name;
}

OpenedHeartbeatStore HeartbeatConformance::Open(absl::Duration interval) {
  absl::StatusOr<OpenedHeartbeatStore> opened = GetParam().open(interval);
  EXPECT_TRUE(opened.ok()) << opened.status();
  if (!opened.ok() || opened->store == nullptr) {
    ADD_FAILURE() << "no store";
    return {};
  }
  return *std::move(opened);
}

v1::HostReport HeartbeatReport(uint64_t seq, const std::string& release) {
  SampleHost h;
  h.host_id = "h";
  h.threads = 20000 + (seq * 7) % 13;
  h.kernel_release = release;
  return SampleReport(
      h, seq,
      kHeartbeatStart + absl::Seconds(15 * seq) + absl::Milliseconds(seq % 3));
}

ReportRow HeartbeatRow(const v1::HostReport& r) {
  const std::string blob = r.SerializeAsString();
  absl::StatusOr<ReportHead> head = DecodeReportHead(blob);
  EXPECT_TRUE(head.ok());
  return MakeReportRow(*head, blob,
                       kHeartbeatStart + absl::Seconds(15 * r.seq()) +
                           absl::Milliseconds(2 + r.seq() % 5));
}

namespace {

using W = WriteOutcome;

const absl::Time kStart = kHeartbeatStart;
constexpr int64_t kSecond = 1000000000;

std::vector<W> Write(ReportStore& s,
                     const std::vector<v1::HostReport>& reports) {
  std::vector<ReportRow> rows;
  for (const v1::HostReport& r : reports) rows.push_back(HeartbeatRow(r));
  auto out = s.WriteBatch(rows);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *out : std::vector<W>{};
}

std::vector<v1::HostReport> Reports(uint64_t from, uint64_t to,
                                    const std::string& release = "6.16.3") {
  std::vector<v1::HostReport> out;
  for (uint64_t seq = from; seq <= to; ++seq)
    out.push_back(HeartbeatReport(seq, release));
  return out;
}

v1::HostReport Parse(const absl::StatusOr<std::string>& blob) {
  v1::HostReport r;
  EXPECT_TRUE(blob.ok()) << blob.status();
  if (blob.ok()) {
    EXPECT_TRUE(r.ParseFromString(*blob));
  }
  return r;
}

std::map<std::string, LatestRow> Latest(ReportStore& store) {
  std::map<std::string, LatestRow> latest;
  absl::Status st =
      store.LoadLatest([&](LatestRow& r) { latest[r.host_id] = std::move(r); });
  EXPECT_TRUE(st.ok()) << st;
  return latest;
}

TEST_P(HeartbeatConformance, SteadyReportsAreHeartbeatsAndReadBackWhole) {
  OpenedHeartbeatStore s = Open(absl::Hours(6));
  ASSERT_NE(s.store, nullptr);
  const std::vector<v1::HostReport> reports = Reports(1, 10);
  // One batch of five, then one by one.
  EXPECT_EQ(Write(*s.store, {reports.begin(), reports.begin() + 5}),
            std::vector<W>(5, W::kStored));
  for (size_t i = 5; i < reports.size(); ++i) {
    EXPECT_EQ(Write(*s.store, {reports[i]}), std::vector<W>{W::kStored});
  }
  EXPECT_EQ(s.full_reports(), 1);
  EXPECT_EQ(s.chunks(), 1);
  EXPECT_EQ(*s.store->CountReports("h"), 10);
  EXPECT_EQ(*s.store->CountReports(""), 10);
  // Every seq reads back with its own seq, time, threads and latency.
  for (const v1::HostReport& want : reports) {
    SCOPED_TRACE(want.seq());
    const v1::HostReport got = Parse(s.store->GetReport("h", want.seq()));
    EXPECT_EQ(got.seq(), want.seq());
    EXPECT_EQ(got.observed_at().seconds(), want.observed_at().seconds());
    EXPECT_EQ(got.observed_at().nanos(), want.observed_at().nanos());
    EXPECT_EQ(got.snapshot().threads().total(),
              want.snapshot().threads().total());
    ASSERT_EQ(got.predictions().attach_size(),
              want.predictions().attach_size());
    for (int i = 0; i < got.predictions().attach_size(); ++i) {
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
  EXPECT_TRUE(absl::IsNotFound(s.store->GetReport("h", 11).status()));
  EXPECT_TRUE(absl::IsNotFound(s.store->GetReport("h", 0).status()));
  // A restart loads the newest seq with its full report's record.
  std::map<std::string, LatestRow> latest = Latest(*s.store);
  ASSERT_EQ(latest.size(), 1u);
  EXPECT_EQ(latest["h"].latest_seq, 10u);
  EXPECT_EQ(latest["h"].reports, 10u);
  EXPECT_EQ(latest["h"].first_seen_ns, HeartbeatRow(reports[0]).received_at_ns);
  EXPECT_EQ(latest["h"].last_seen_ns, HeartbeatRow(reports[9]).received_at_ns);
  EXPECT_EQ(latest["h"].record, HeartbeatRow(reports[0]).record);
}

// A row whose blob and record are made only when needed (ReportRow::whole,
// as ingest builds them): made once, for the row stored whole, never for a
// heartbeat or a duplicate; what is read back is the same.
TEST_P(HeartbeatConformance, WholePartsAreMadeOnlyForARowStoredWhole) {
  OpenedHeartbeatStore s = Open(absl::Hours(6));
  ASSERT_NE(s.store, nullptr);
  const std::vector<v1::HostReport> reports = Reports(1, 4);
  int made = 0;
  std::vector<ReportRow> rows;
  for (const v1::HostReport& r : reports) {
    ReportRow row = HeartbeatRow(r);
    row.whole = [&made, blob = row.blob, record = row.record](
                    std::string* b, std::string* rec) {
      ++made;
      *b = blob;
      *rec = record;
    };
    row.blob.clear();
    row.record.clear();
    rows.push_back(std::move(row));
  }
  ASSERT_TRUE(s.store->WriteBatch(rows).ok());
  EXPECT_EQ(made, 1);
  EXPECT_EQ(s.full_reports(), 1);
  ASSERT_TRUE(s.store->WriteBatch({rows[0], rows[2]}).ok());  // duplicates
  EXPECT_EQ(made, 1);
  EXPECT_EQ(*s.store->GetReport("h", 1), reports[0].SerializeAsString());
  EXPECT_EQ(Parse(s.store->GetReport("h", 4)).seq(), 4u);
  std::map<std::string, LatestRow> latest = Latest(*s.store);
  EXPECT_EQ(latest["h"].record, HeartbeatRow(reports[0]).record);
}

TEST_P(HeartbeatConformance, MaterialChangeIsStoredWhole) {
  OpenedHeartbeatStore s = Open(absl::Hours(6));
  ASSERT_NE(s.store, nullptr);
  Write(*s.store, {HeartbeatReport(1), HeartbeatReport(2),
                   HeartbeatReport(3, "6.17.1"), HeartbeatReport(4, "6.17.1")});
  // 1 whole, 2 a heartbeat, 3 whole (its kernel), 4 a heartbeat of 3.
  EXPECT_EQ(s.full_reports(), 2);
  EXPECT_EQ(s.chunks(), 2);
  EXPECT_EQ(*s.store->CountReports("h"), 4);
  EXPECT_EQ(Parse(s.store->GetReport("h", 4)).snapshot().kernel().release(),
            "6.17.1");
  EXPECT_EQ(Parse(s.store->GetReport("h", 2)).snapshot().kernel().release(),
            "6.16.3");
  EXPECT_EQ(Latest(*s.store)["h"].record,
            HeartbeatRow(HeartbeatReport(3, "6.17.1")).record);
}

TEST_P(HeartbeatConformance, FullReportAtLeastEveryInterval) {
  // A full report at least every 60 s: a report received 60 s - 1 ns after
  // the full one is a heartbeat, one received 60 s after it is whole.
  OpenedHeartbeatStore s = Open(absl::Seconds(60));
  ASSERT_NE(s.store, nullptr);
  const int64_t t0 = absl::ToUnixNanos(kStart);
  const int64_t kMinute = 60 * kSecond;
  const std::vector<std::pair<uint64_t, int64_t>> received = {
      {1, t0},                    // whole: the first
      {2, t0 + kMinute - 1},      // heartbeat
      {3, t0 + kMinute},          // whole: the interval has passed
      {4, t0 + 2 * kMinute - 1},  // heartbeat of 3
      {5, t0 + 2 * kMinute},      // whole
  };
  for (const auto& [seq, at] : received) {
    ReportRow row = HeartbeatRow(HeartbeatReport(seq));
    row.received_at_ns = at;
    ASSERT_TRUE(s.store->WriteBatch({row}).ok());
  }
  EXPECT_EQ(s.full_reports(), 3);
  EXPECT_EQ(s.chunks(), 2);
  EXPECT_EQ(*s.store->CountReports("h"), 5);
}

TEST_P(HeartbeatConformance, ZeroIntervalStoresEveryReportWhole) {
  OpenedHeartbeatStore s = Open(absl::ZeroDuration());
  ASSERT_NE(s.store, nullptr);
  for (const v1::HostReport& r : Reports(1, 5)) Write(*s.store, {r});
  EXPECT_EQ(s.full_reports(), 5);
  EXPECT_EQ(s.chunks(), 0);
}

TEST_P(HeartbeatConformance, ReplayedHeartbeatStoresNothingTwice) {
  OpenedHeartbeatStore s = Open(absl::Hours(6));
  ASSERT_NE(s.store, nullptr);
  const std::vector<v1::HostReport> reports = Reports(1, 6);
  Write(*s.store, {reports.begin(), reports.begin() + 5});
  // 3..5 again (an agent that lost the acks), then 3 alone, then 4 with
  // the new 6 and 6 again.
  EXPECT_EQ(Write(*s.store, {reports[2], reports[3], reports[4]}),
            std::vector<W>(3, W::kDuplicate));
  EXPECT_EQ(Write(*s.store, {reports[2]}), std::vector<W>{W::kDuplicate});
  EXPECT_EQ(Write(*s.store, {reports[3], reports[5], reports[5]}),
            (std::vector<W>{W::kDuplicate, W::kStored, W::kDuplicate}));
  EXPECT_EQ(s.full_reports(), 1);
  EXPECT_EQ(s.chunks(), 1);
  EXPECT_EQ(*s.store->CountReports("h"), 6);
  EXPECT_EQ(Parse(s.store->GetReport("h", 6)).seq(), 6u);
  EXPECT_EQ(Latest(*s.store)["h"].reports, 6u);
}

// The same reports in a store with heartbeats and one storing each whole:
// the same history, a heartbeat's row carrying its own seq, times and
// columns, and its full report's risk and bytes.
TEST_P(HeartbeatConformance, HistoryIsTheSameWithAndWithoutHeartbeats) {
  OpenedHeartbeatStore beats = Open(absl::Hours(6));
  OpenedHeartbeatStore whole = Open(absl::ZeroDuration());
  ASSERT_NE(beats.store, nullptr);
  ASSERT_NE(whole.store, nullptr);
  // 1-6 on one kernel, 7-12 on another: whole are 1 and 7.
  std::vector<v1::HostReport> reports = Reports(1, 6);
  for (const v1::HostReport& r : Reports(7, 12, "6.17.1")) {
    reports.push_back(r);
  }
  for (OpenedHeartbeatStore* s : {&beats, &whole}) {
    Write(*s->store, {reports.begin(), reports.begin() + 4});
    Write(*s->store, {reports.begin() + 4, reports.end()});
  }
  ASSERT_EQ(beats.full_reports(), 2);
  ASSERT_EQ(whole.full_reports(), 12);
  auto observed = [&](size_t i) {
    return HeartbeatRow(reports[i]).observed_at_ns;
  };
  struct Window {
    int64_t from, to;
    size_t max_rows;
    std::vector<uint64_t> seqs;
    int64_t matched;
  };
  const std::vector<Window> windows = {
      {observed(0),
       observed(11) + 1,
       100,
       {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12},
       12},
      // 12 rows, at most 5: every ceil(12 / 5) = 3rd from the first.
      {observed(0), observed(11) + 1, 5, {1, 4, 7, 10}, 12},
      // [seq 3's observation, seq 9's): 3..8, the end excluded.
      {observed(2), observed(8), 100, {3, 4, 5, 6, 7, 8}, 6},
      // Past the end: nothing.
      {observed(11) + 1, observed(11) + kSecond, 10, {}, 0},
  };
  for (const Window& w : windows) {
    SCOPED_TRACE(w.max_rows);
    auto a = beats.store->ReadHostHistory("h", w.from, w.to, w.max_rows);
    auto b = whole.store->ReadHostHistory("h", w.from, w.to, w.max_rows);
    ASSERT_TRUE(a.ok()) << a.status();
    ASSERT_TRUE(b.ok()) << b.status();
    EXPECT_EQ(a->matched, w.matched);
    EXPECT_EQ(b->matched, w.matched);
    ASSERT_EQ(a->rows.size(), w.seqs.size());
    ASSERT_EQ(b->rows.size(), w.seqs.size());
    for (size_t i = 0; i < w.seqs.size(); ++i) {
      const ReportRow& x = a->rows[i];
      const ReportRow& y = b->rows[i];
      SCOPED_TRACE(w.seqs[i]);
      EXPECT_EQ(x.seq, w.seqs[i]);
      EXPECT_EQ(y.seq, w.seqs[i]);
      EXPECT_EQ(x.observed_at_ns, y.observed_at_ns);
      EXPECT_EQ(x.received_at_ns, y.received_at_ns);
      EXPECT_EQ(x.worst_risk, y.worst_risk);
      EXPECT_EQ(x.attach_latency_seconds, y.attach_latency_seconds);
      EXPECT_EQ(x.pool_budget_ratio, y.pool_budget_ratio);
      EXPECT_EQ(x.purge_seconds, y.purge_seconds);
      EXPECT_EQ(x.heartbeat, x.seq != 1 && x.seq != 7);
      EXPECT_FALSE(y.heartbeat);
      // A heartbeat's bytes are its full report's (1 or 7).
      v1::HostReport full;
      ASSERT_TRUE(full.ParseFromString(x.blob));
      EXPECT_EQ(full.seq(), x.seq < 7 ? 1u : 7u);
      v1::HostReport own;
      ASSERT_TRUE(own.ParseFromString(y.blob));
      EXPECT_EQ(own.seq(), y.seq);
      EXPECT_EQ(full.snapshot().kernel().release(),
                own.snapshot().kernel().release());
    }
  }
}

// Retention deletes a chunk once its last heartbeat is older than the
// cutoff (and it does not hold the host's newest seq), and a full report
// once no chunk on it is left.
TEST_P(HeartbeatConformance, RetentionOfFullReportsAndHeartbeats) {
  OpenedHeartbeatStore s = Open(absl::Hours(6));
  ASSERT_NE(s.store, nullptr);
  // 1 whole, 2-5 heartbeats of 1 (received 30-75 s), 6 whole (a new
  // kernel, 90 s), 7-10 heartbeats of 6 (105-150 s).
  std::vector<v1::HostReport> reports = Reports(1, 5);
  for (const v1::HostReport& r : Reports(6, 10, "6.17.1")) {
    reports.push_back(r);
  }
  for (const v1::HostReport& r : reports) Write(*s.store, {r});
  ASSERT_EQ(s.full_reports(), 2);
  ASSERT_EQ(s.chunks(), 2);
  const int64_t t0 = absl::ToUnixNanos(kStart);
  // At seq 5's receive time (75 s + 2 ms): 2-5's chunk stays, and 1 with
  // it; 1 ns later both go.
  const int64_t fifth = HeartbeatRow(reports[4]).received_at_ns;
  auto deleted = s.store->DeleteReportsReceivedBefore(fifth);
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  EXPECT_EQ(*deleted, 0);
  EXPECT_EQ(*s.store->CountReports("h"), 10);
  deleted = s.store->DeleteReportsReceivedBefore(fifth + 1);
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  EXPECT_EQ(*deleted, 5);
  // At 100 s: nothing more (6 is older but 7-10 are on it).
  deleted = s.store->DeleteReportsReceivedBefore(t0 + 100 * kSecond);
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  EXPECT_EQ(*deleted, 0);
  EXPECT_EQ(*s.store->CountReports("h"), 5);
  EXPECT_EQ(s.full_reports(), 1);
  EXPECT_EQ(s.chunks(), 1);
  EXPECT_TRUE(absl::IsNotFound(s.store->GetReport("h", 3).status()));
  EXPECT_TRUE(absl::IsNotFound(s.store->GetReport("h", 1).status()));
  EXPECT_EQ(Parse(s.store->GetReport("h", 8)).seq(), 8u);
  // Past everything: the chunk holding the newest seq, and its full report,
  // stay.
  deleted = s.store->DeleteReportsReceivedBefore(t0 + 1000 * kSecond);
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  EXPECT_EQ(*deleted, 0);
  EXPECT_EQ(*s.store->CountReports("h"), 5);
  const v1::HostReport newest = Parse(s.store->GetReport("h", 10));
  EXPECT_EQ(newest.seq(), 10u);
  EXPECT_EQ(newest.snapshot().kernel().release(), "6.17.1");
  std::map<std::string, LatestRow> latest = Latest(*s.store);
  EXPECT_EQ(latest["h"].latest_seq, 10u);
  EXPECT_EQ(latest["h"].record, HeartbeatRow(reports[5]).record);
  // The host's next report is still a heartbeat of 6.
  Write(*s.store, {HeartbeatReport(11, "6.17.1")});
  EXPECT_EQ(s.full_reports(), 1);
  EXPECT_EQ(*s.store->CountReports("h"), 6);
}

// A host whose reports go to another store (replica) and back: each store
// stores its first report of the host above the other's whole, then folds.
TEST_P(HeartbeatConformance, HostMovedToAnotherStoreIsStoredWholeFirst) {
  OpenedHeartbeatStore s = Open(absl::Hours(6));
  ASSERT_NE(s.store, nullptr);
  if (!s.another) GTEST_SKIP() << "the backend has no second store";
  absl::StatusOr<std::unique_ptr<ReportStore>> b = s.another();
  ASSERT_TRUE(b.ok()) << b.status();
  ReportStore& a = *s.store;
  const std::vector<v1::HostReport> r = Reports(1, 7);
  Write(a, {r[0], r[1]});    // 1 whole, 2 a heartbeat of 1
  Write(**b, {r[2], r[3]});  // 3 whole (b's first), 4 of 3
  Write(a, {r[4]});          // 5 whole: 3 and 4 are b's
  Write(a, {r[5]});          // 6 of 5
  EXPECT_EQ(s.full_reports(), 3);
  EXPECT_EQ(s.chunks(), 3);
  // Replays on either store are duplicates.
  EXPECT_EQ(Write(**b, {r[1], r[5]}), std::vector<W>(2, W::kDuplicate));
  EXPECT_EQ(Write(a, {r[3]}), std::vector<W>{W::kDuplicate});
  // b folds 7 into neither its 3 nor a's 5: it did not store 6.
  Write(**b, {r[6]});
  EXPECT_EQ(s.full_reports(), 4);
  for (ReportStore* store : {&a, b->get()}) {
    EXPECT_EQ(*store->CountReports("h"), 7);
    for (uint64_t seq = 1; seq <= 7; ++seq) {
      EXPECT_EQ(Parse(store->GetReport("h", seq)).seq(), seq);
    }
    auto history = store->ReadHostHistory(
        "h", 0, std::numeric_limits<int64_t>::max(), 100);
    ASSERT_TRUE(history.ok()) << history.status();
    std::vector<uint64_t> beats;
    for (const ReportRow& row : history->rows) {
      if (row.heartbeat) beats.push_back(row.seq);
    }
    EXPECT_EQ(beats, (std::vector<uint64_t>{2, 4, 6}));
  }
  EXPECT_EQ(Latest(a)["h"].latest_seq, 7u);
}

}  // namespace
}  // namespace tracehealth::server
