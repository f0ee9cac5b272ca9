#include "server/storage/conformance/report_store_conformance.h"

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server/storage/conformance/test_rows.h"

namespace tracehealth::server {

void PrintTo(const ReportStoreBackend& backend, std::ostream* os) {
  *os << backend.name;
}

std::string ReportStoreBackendName(
    const ::testing::TestParamInfo<ReportStoreBackend>& info) {
  return info.param.name;
}

void ReportStoreConformance::SetUp() {
  absl::StatusOr<OpenedReportStore> opened = GetParam().open();
  ASSERT_TRUE(opened.ok()) << opened.status();
  ASSERT_NE(opened->store, nullptr);
  opened_ = *std::move(opened);
}

namespace {

using W = WriteOutcome;

std::map<std::string, LatestRow> Latest(ReportStore& store) {
  std::map<std::string, LatestRow> latest;
  absl::Status st =
      store.LoadLatest([&](LatestRow& r) { latest[r.host_id] = std::move(r); });
  EXPECT_TRUE(st.ok()) << st;
  return latest;
}

TEST_P(ReportStoreConformance, StoresEachHostSeqOnceAndReportsDuplicates) {
  auto out = store().WriteBatch(
      {TestRow("a", 1, 100), TestRow("a", 2, 200), TestRow("b", 1, 150)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, (std::vector<W>{W::kStored, W::kStored, W::kStored}));
  // A replay of a@2 with other content, a new a@3, and a@3 again in the same
  // batch.
  out = store().WriteBatch({TestRow("a", 2, 200, "other"), TestRow("a", 3, 300),
                            TestRow("a", 3, 300)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, (std::vector<W>{W::kDuplicate, W::kStored, W::kDuplicate}));
  EXPECT_EQ(*store().CountReports("a"), 3);
  EXPECT_EQ(*store().CountReports("b"), 1);
  EXPECT_EQ(*store().CountReports(""), 4);
  EXPECT_EQ(*store().CountReports("c"), 0);
  // The replay left the stored row as it was.
  EXPECT_EQ(*store().GetReport("a", 2), "blob2");
  EXPECT_EQ(*store().GetReport("b", 1), "blob1");
}

TEST_P(ReportStoreConformance, EmptyBatchStoresNothing) {
  auto out = store().WriteBatch({});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(out->empty());
  EXPECT_EQ(*store().CountReports(""), 0);
}

TEST_P(ReportStoreConformance, FailedBatchStoresNothingAndLeavesNoSeqsBehind) {
  if (!opened_.refuse_insert || !opened_.allow_inserts) {
    GTEST_SKIP() << "the backend cannot make an insert fail";
  }
  ASSERT_TRUE(store().WriteBatch({TestRow("a", 1, 1)}).ok());
  opened_.refuse_insert("a", 4);
  // a@2 and a@3 are inserted, then a@4 fails the whole batch.
  auto failed = store().WriteBatch(
      {TestRow("a", 2, 2), TestRow("a", 3, 3), TestRow("a", 4, 4)});
  EXPECT_FALSE(failed.ok());
  EXPECT_EQ(*store().CountReports("a"), 1);
  EXPECT_TRUE(absl::IsNotFound(store().GetReport("a", 2).status()));
  opened_.allow_inserts();
  // The rolled-back seqs are not taken for stored ones.
  auto out = store().WriteBatch(
      {TestRow("a", 2, 2), TestRow("a", 3, 3), TestRow("a", 1, 1)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, (std::vector<W>{W::kStored, W::kStored, W::kDuplicate}));
  EXPECT_EQ(*store().CountReports("a"), 3);
  std::map<std::string, LatestRow> latest = Latest(store());
  EXPECT_EQ(latest["a"].latest_seq, 3u);
  EXPECT_EQ(latest["a"].reports, 3u);
}

// Exactly once for any number of gaps: a host with 1,000 separate runs of
// seqs (every odd seq of 1..1999) whose gaps are then filled in a shuffled
// order, with replays of stored seqs and repeats inside a batch mixed in.
// The expected outcome of each row is worked out with a plain set.
TEST_P(ReportStoreConformance, StoresEachSeqOnceWhateverTheNumberOfGaps) {
  constexpr uint64_t kLast = 2000;
  std::vector<ReportRow> odd;
  for (uint64_t seq = 1; seq < kLast; seq += 2)
    odd.push_back(TestRow("g", seq, static_cast<int64_t>(seq)));
  for (size_t i = 0; i < odd.size(); i += 250) {
    std::vector<ReportRow> batch(odd.begin() + i, odd.begin() + i + 250);
    auto out = store().WriteBatch(batch);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(std::count(out->begin(), out->end(), W::kStored), 250);
  }
  // Every seq of 1..2000 once, shuffled, plus 300 repeats.
  std::mt19937_64 rng(17);
  std::vector<uint64_t> order;
  for (uint64_t seq = 1; seq <= kLast; ++seq) order.push_back(seq);
  for (int i = 0; i < 300; ++i) order.push_back(1 + rng() % kLast);
  std::shuffle(order.begin(), order.end(), rng);
  std::set<uint64_t> held;
  for (uint64_t seq = 1; seq < kLast; seq += 2) held.insert(seq);
  size_t stored = 0;
  for (size_t i = 0; i < order.size(); i += 100) {
    std::vector<ReportRow> batch;
    std::vector<W> want;
    for (size_t j = i; j < std::min(order.size(), i + 100); ++j) {
      batch.push_back(TestRow("g", order[j], 5000, "late"));
      want.push_back(held.insert(order[j]).second ? W::kStored : W::kDuplicate);
    }
    auto out = store().WriteBatch(batch);
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ(*out, want) << "batch at " << i;
    stored += std::count(want.begin(), want.end(), W::kStored);
  }
  EXPECT_EQ(stored, 1000u);  // the 1,000 even seqs
  EXPECT_EQ(*store().CountReports("g"), 2000);
  for (uint64_t seq : {1, 2, 1000, 2000}) {
    absl::StatusOr<std::string> blob = store().GetReport("g", seq);
    ASSERT_TRUE(blob.ok()) << seq << ": " << blob.status();
    EXPECT_EQ(*blob, absl::StrCat(seq % 2 == 1 ? "blob" : "late", seq));
  }
  // A second replay of everything stores nothing.
  std::vector<ReportRow> all;
  for (uint64_t seq = 1; seq <= kLast; ++seq)
    all.push_back(TestRow("g", seq, 6000, "again"));
  auto again = store().WriteBatch(all);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(std::count(again->begin(), again->end(), W::kDuplicate), 2000);
  EXPECT_EQ(*store().CountReports("g"), 2000);
  std::map<std::string, LatestRow> latest = Latest(store());
  EXPECT_EQ(latest["g"].reports, 2000u);
  EXPECT_EQ(latest["g"].latest_seq, kLast);
}

// A batch that fails after filling gaps far behind the newest seq leaves
// none of them taken for stored.
TEST_P(ReportStoreConformance, FailedBatchInOldGapsLeavesNoSeqsBehind) {
  if (!opened_.refuse_insert || !opened_.allow_inserts) {
    GTEST_SKIP() << "the backend cannot make an insert fail";
  }
  // 500 runs: 1, 3, ..., 999.
  std::vector<ReportRow> odd;
  for (uint64_t seq = 1; seq < 1000; seq += 2)
    odd.push_back(TestRow("g", seq, static_cast<int64_t>(seq)));
  ASSERT_TRUE(store().WriteBatch(odd).ok());
  opened_.refuse_insert("g", 998);
  // 2, 4, ..., 996 are inserted (the oldest gaps first), then 998 fails.
  std::vector<ReportRow> even;
  for (uint64_t seq = 2; seq < 1000; seq += 2)
    even.push_back(TestRow("g", seq, 2000));
  EXPECT_FALSE(store().WriteBatch(even).ok());
  EXPECT_EQ(*store().CountReports("g"), 500);
  opened_.allow_inserts();
  auto out = store().WriteBatch(even);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(std::count(out->begin(), out->end(), W::kStored), 499);
  EXPECT_EQ(*store().CountReports("g"), 999);
  absl::StatusOr<std::string> blob = store().GetReport("g", 2);
  ASSERT_TRUE(blob.ok()) << blob.status();
  EXPECT_EQ(*blob, "blob2");
}

TEST_P(ReportStoreConformance, GetReportOfAnAbsentRowIsNotFound) {
  ASSERT_TRUE(store().WriteBatch({TestRow("a", 1, 1)}).ok());
  EXPECT_EQ(*store().GetReport("a", 1), "blob1");
  EXPECT_TRUE(absl::IsNotFound(store().GetReport("a", 2).status()));
  EXPECT_TRUE(absl::IsNotFound(store().GetReport("b", 1).status()));
}

TEST_P(ReportStoreConformance, LoadLatestGivesEachHostsHighestSeq) {
  EXPECT_TRUE(Latest(store()).empty());
  // a@2 arrives after a@3 (a replay filling a gap): a's newest report stays
  // a@3, its last receive time is a@2's.
  ASSERT_TRUE(store()
                  .WriteBatch({TestRow("a", 1, 100), TestRow("b", 1, 150),
                               TestRow("a", 3, 300)})
                  .ok());
  ASSERT_TRUE(store().WriteBatch({TestRow("a", 2, 350)}).ok());
  std::map<std::string, LatestRow> latest = Latest(store());
  ASSERT_EQ(latest.size(), 2u);
  EXPECT_EQ(latest["a"].host_id, "a");
  EXPECT_EQ(latest["a"].latest_seq, 3u);
  EXPECT_EQ(latest["a"].blob, "blob3");
  EXPECT_EQ(latest["a"].reports, 3u);
  EXPECT_EQ(latest["a"].first_seen_ns, 101);  // a@1: observed 100 + 1
  EXPECT_EQ(latest["a"].last_seen_ns, 351);   // a@2: observed 350 + 1
  EXPECT_EQ(latest["b"].latest_seq, 1u);
  EXPECT_EQ(latest["b"].blob, "blob1");
  EXPECT_EQ(latest["b"].reports, 1u);
  EXPECT_EQ(latest["b"].first_seen_ns, 151);
  EXPECT_EQ(latest["b"].last_seen_ns, 151);
}

TEST_P(ReportStoreConformance, LoadLatestGivesTheRecordWhereOneIsStored) {
  // Records "rec<seq>" on a@1, a@3 and c@2; none on b@1 and c@3.
  auto with_record = [](ReportRow r) {
    r.record = "rec" + std::to_string(r.seq);
    return r;
  };
  ASSERT_TRUE(
      store()
          .WriteBatch({with_record(TestRow("a", 1, 100)), TestRow("b", 1, 150),
                       with_record(TestRow("a", 3, 300)),
                       with_record(TestRow("c", 2, 310)), TestRow("c", 3, 320)})
          .ok());
  std::map<std::string, LatestRow> latest = Latest(store());
  ASSERT_EQ(latest.size(), 3u);
  // a's newest has a record: the record, not the report.
  EXPECT_EQ(latest["a"].latest_seq, 3u);
  EXPECT_EQ(latest["a"].record, "rec3");
  EXPECT_EQ(latest["a"].blob, "");
  EXPECT_EQ(latest["a"].reports, 2u);
  // b's and c's newest have none: the report (c's older record is not it).
  EXPECT_EQ(latest["b"].record, "");
  EXPECT_EQ(latest["b"].blob, "blob1");
  EXPECT_EQ(latest["c"].latest_seq, 3u);
  EXPECT_EQ(latest["c"].record, "");
  EXPECT_EQ(latest["c"].blob, "blob3");
  // The reports themselves are still there.
  EXPECT_EQ(*store().GetReport("a", 3), "blob3");
  EXPECT_EQ(*store().GetReport("c", 2), "blob2");
  // Retention keeps the newest rows' records.
  ASSERT_TRUE(store().DeleteReportsReceivedBefore(1000).ok());
  EXPECT_EQ(*store().CountReports(""), 3);
  latest = Latest(store());
  EXPECT_EQ(latest["a"].record, "rec3");
  EXPECT_EQ(latest["c"].blob, "blob3");
}

TEST_P(ReportStoreConformance, RetentionKeepsEachHostsNewestReport) {
  // In receive order, as the writer stores them; received = observed + 1:
  // old@1 51, old@2 61, a@1 101, a@2 201, a@3 901.
  ASSERT_TRUE(store()
                  .WriteBatch({TestRow("old", 1, 50), TestRow("old", 2, 60),
                               TestRow("a", 1, 100), TestRow("a", 2, 200),
                               TestRow("a", 3, 900)})
                  .ok());
  auto deleted = store().DeleteReportsReceivedBefore(500);
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  EXPECT_EQ(*deleted, 3);  // a@1, a@2, old@1; old@2 is old's newest
  EXPECT_EQ(*store().CountReports("a"), 1);
  EXPECT_EQ(*store().CountReports("old"), 1);
  EXPECT_EQ(*store().GetReport("old", 2), "blob2");
  EXPECT_EQ(*store().GetReport("a", 3), "blob3");
  EXPECT_TRUE(absl::IsNotFound(store().GetReport("a", 1).status()));
  // Retention does not lower the report counts or change the newest rows.
  std::map<std::string, LatestRow> latest = Latest(store());
  EXPECT_EQ(latest["a"].reports, 3u);
  EXPECT_EQ(latest["a"].blob, "blob3");
  EXPECT_EQ(latest["old"].latest_seq, 2u);
}

TEST_P(ReportStoreConformance, RetentionDeletesOnlyRowsReceivedBeforeCutoff) {
  // Received at 101, 201 and 301.
  ASSERT_TRUE(store()
                  .WriteBatch({TestRow("h", 1, 100), TestRow("h", 2, 200),
                               TestRow("h", 3, 300)})
                  .ok());
  // h@2 was received at the cutoff: kept.
  EXPECT_EQ(*store().DeleteReportsReceivedBefore(201), 1);
  EXPECT_EQ(*store().GetReport("h", 2), "blob2");
  EXPECT_TRUE(absl::IsNotFound(store().GetReport("h", 1).status()));
  // One nanosecond later it goes.
  EXPECT_EQ(*store().DeleteReportsReceivedBefore(202), 1);
  EXPECT_EQ(*store().CountReports("h"), 1);
  // h@3 is the host's newest: kept whatever the cutoff.
  EXPECT_EQ(*store().DeleteReportsReceivedBefore(int64_t{1} << 62), 0);
  EXPECT_EQ(*store().GetReport("h", 3), "blob3");
}

TEST_P(ReportStoreConformance, RetentionOfAnEmptyStoreDeletesNothing) {
  auto deleted = store().DeleteReportsReceivedBefore(1000);
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  EXPECT_EQ(*deleted, 0);
}

TEST_P(ReportStoreConformance, SizeCountsStoredRows) {
  const std::string blob(100000, 'x');
  std::vector<ReportRow> rows;
  for (uint64_t seq = 1; seq <= 10; ++seq)
    rows.push_back(TestRow("h", seq, 1, blob));
  ASSERT_TRUE(store().WriteBatch(rows).ok());
  auto bytes = store().SizeBytes();
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  // Ten blobs of 100,000 bytes (and a few digits) are stored.
  EXPECT_GE(*bytes, 10 * 100000);
}

// Seqs of `rows`, in order.
std::vector<uint64_t> Seqs(const HistoryRows& h) {
  std::vector<uint64_t> seqs;
  for (const ReportRow& r : h.rows) seqs.push_back(r.seq);
  return seqs;
}

TEST_P(ReportStoreConformance, HostHistoryIsTheWindowOldestFirst) {
  // a: seqs 1..10 observed at 100, 200, ..., 1000; b interleaved.
  std::vector<ReportRow> rows;
  for (uint64_t s = 1; s <= 10; ++s) {
    rows.push_back(TestRow("a", s, static_cast<int64_t>(s) * 100));
    rows.push_back(TestRow("b", s, static_cast<int64_t>(s) * 100 + 50));
  }
  rows[0].pool_budget_ratio = 0.25;
  rows[0].purge_seconds = 23.87;
  rows[0].worst_risk = 4;
  ASSERT_TRUE(store().WriteBatch(rows).ok());

  // [200, 600): observed 200, 300, 400, 500 (600 is outside).
  absl::StatusOr<HistoryRows> h = store().ReadHostHistory("a", 200, 600, 100);
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->matched, 4);
  EXPECT_EQ(Seqs(*h), (std::vector<uint64_t>{2, 3, 4, 5}));

  // The columns and the blob come back as stored.
  h = store().ReadHostHistory("a", 100, 101, 1);
  ASSERT_TRUE(h.ok()) << h.status();
  ASSERT_EQ(h->rows.size(), 1u);
  const ReportRow& r = h->rows[0];
  EXPECT_EQ(r.host_id, "a");
  EXPECT_EQ(r.seq, 1u);
  EXPECT_EQ(r.observed_at_ns, 100);
  EXPECT_EQ(r.received_at_ns, 101);
  EXPECT_EQ(r.worst_risk, 4);
  EXPECT_EQ(r.attach_latency_seconds, 1.5);
  EXPECT_EQ(r.pool_budget_ratio, 0.25);
  EXPECT_EQ(r.purge_seconds, 23.87);
  EXPECT_EQ(r.blob, "blob1");

  // Nothing for an unknown host, an empty or inverted window.
  EXPECT_EQ(store().ReadHostHistory("c", 0, 2000, 10)->matched, 0);
  EXPECT_TRUE(store().ReadHostHistory("c", 0, 2000, 10)->rows.empty());
  EXPECT_TRUE(store().ReadHostHistory("a", 500, 500, 10)->rows.empty());
  EXPECT_TRUE(store().ReadHostHistory("a", 900, 100, 10)->rows.empty());
  EXPECT_TRUE(absl::IsInvalidArgument(
      store().ReadHostHistory("a", 0, 2000, 0).status()));
}

TEST_P(ReportStoreConformance, HostHistoryKeepsEveryKthRowWhenThereAreMore) {
  std::vector<ReportRow> rows;
  for (uint64_t s = 1; s <= 10; ++s) {
    rows.push_back(TestRow("a", s, static_cast<int64_t>(s) * 100));
  }
  ASSERT_TRUE(store().WriteBatch(rows).ok());
  struct Case {
    size_t max_rows;
    std::vector<uint64_t> seqs;
  } cases[] = {
      {10, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}},  // k = 1
      {9, {1, 3, 5, 7, 9}},                   // k = ceil(10/9) = 2
      {5, {1, 3, 5, 7, 9}},                   // k = 2
      {4, {1, 4, 7, 10}},                     // k = ceil(10/4) = 3
      {3, {1, 5, 9}},                         // k = ceil(10/3) = 4
      {2, {1, 6}},                            // k = 5
      {1, {1}},                               // k = 10
  };
  for (const Case& c : cases) {
    absl::StatusOr<HistoryRows> h =
        store().ReadHostHistory("a", 0, 2000, c.max_rows);
    ASSERT_TRUE(h.ok()) << h.status();
    EXPECT_EQ(h->matched, 10);
    EXPECT_EQ(Seqs(*h), c.seqs) << "max_rows " << c.max_rows;
  }
}

TEST_P(ReportStoreConformance, HostHistoryOrdersByObservationTimeThenSeq) {
  // Stored in seq order, observed out of it (a clock step on the host).
  ASSERT_TRUE(store()
                  .WriteBatch({TestRow("a", 1, 300), TestRow("a", 2, 100),
                               TestRow("a", 3, 200), TestRow("a", 4, 200)})
                  .ok());
  absl::StatusOr<HistoryRows> h = store().ReadHostHistory("a", 0, 1000, 10);
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(Seqs(*h), (std::vector<uint64_t>{2, 3, 4, 1}));
}

}  // namespace
}  // namespace tracehealth::server
