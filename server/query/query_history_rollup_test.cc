// QueryService's HostHistory (query_history.cc) over a window that spans
// reports deleted by retention (points from the hourly rollups) and reports
// still stored.
#include <string>
#include <vector>

#include "google/protobuf/util/time_util.h"
#include "gtest/gtest.h"
#include "server/query/query_service.h"
#include "server/query/query_service_test_fixture.h"
#include "server/storage/rollup.h"
#include "tools/loadgen/sample_report.h"

namespace tracehealth::server {
namespace {

using google::protobuf::util::TimeUtil;

constexpr int64_t kH = kRollupHourNs;
constexpr int64_t kMin = kH / 60;

class HistoryRollupTest : public QueryServiceTest {
 protected:
  // h1's seqs 2..7 observed at (hours before now, minutes past the hour,
  // threads): 5h+10m 100, 5h+20m 300, 4h+10m 200, 3h+10m 400, 2h+10m 500,
  // 1h+10m 600; attach latency threads / 1000 s. Rolled up (every hour
  // before now), then the reports received before now - 3 h are deleted
  // (seqs 2, 3, 4).
  void SetUp() override {
    QueryServiceTest::SetUp();
    n_ = absl::ToUnixNanos(now_);  // a whole hour (hour 500,000)
    const struct {
      int64_t hours_ago;
      int64_t minutes;
      uint64_t threads;
    } at[] = {{5, 10, 100}, {5, 20, 300}, {4, 10, 200},
              {3, 10, 400}, {2, 10, 500}, {1, 10, 600}};
    std::vector<ReportRow> rows;
    uint64_t seq = 2;
    for (const auto& a : at) {
      SampleHost h;
      h.host_id = "h1";
      h.threads = a.threads;
      const int64_t observed = n_ - a.hours_ago * kH + a.minutes * kMin;
      const v1::HostReport r =
          SampleReport(h, seq, absl::FromUnixNanos(observed));
      ReportRow row;
      row.host_id = "h1";
      row.seq = seq++;
      row.observed_at_ns = observed;
      row.received_at_ns = observed + 1;
      row.worst_risk = static_cast<int>(a.threads / 100);  // 1..6
      row.attach_latency_seconds = static_cast<double>(a.threads) / 1000;
      row.blob = r.SerializeAsString();
      rows.push_back(row);
    }
    ASSERT_TRUE(storage_->WriteBatch(rows).ok());
    // One pass from the fixture's reports (observed at 0) to now.
    absl::StatusOr<RollupPass> pass = storage_->RollUp(n_, 600000);
    ASSERT_TRUE(pass.ok()) << pass.status();
    ASSERT_EQ(pass->rolled_through_ns, n_);
    absl::StatusOr<int64_t> deleted =
        storage_->DeleteReportsReceivedBefore(n_ - 3 * kH);
    ASSERT_TRUE(deleted.ok());
    // And the fixture's h1 seq 1 (observed at 0), stored before them: the
    // SQLite store deletes by row order (rows are expected in receive
    // order), and it is no longer h1's newest.
    ASSERT_EQ(*deleted, 4);
  }

  v1::GetHostHistoryResponse History(
      int64_t from_ns, int64_t to_ns, uint32_t max_points = 0,
      v1::ProbeKind kind = v1::PROBE_KIND_UNSPECIFIED) {
    v1::GetHostHistoryRequest req;
    req.set_host_id("h1");
    *req.mutable_from() = TimeUtil::NanosecondsToTimestamp(from_ns);
    *req.mutable_to() = TimeUtil::NanosecondsToTimestamp(to_ns);
    req.set_max_points(max_points);
    req.set_probe_kind(kind);
    v1::GetHostHistoryResponse resp;
    grpc::Status st = service_->DoGetHostHistory(req, &resp);
    EXPECT_TRUE(st.ok()) << st.error_message();
    return resp;
  }

  int64_t n_ = 0;
};

// The last 6 hours: hours -5 and -4 from rollups (their reports are gone;
// hour -3 ends after the oldest stored report, seq 5 at -3h+10m, so its
// report stands for it), then seqs 5..7.
TEST_F(HistoryRollupTest, RollupsBeforeTheOldestStoredReport) {
  v1::GetHostHistoryResponse r = History(n_ - 6 * kH, n_);
  EXPECT_EQ(r.matched_reports(), 3u);
  EXPECT_EQ(r.matched_rollups(), 2u);
  ASSERT_EQ(r.points_size(), 5);
  const v1::HistoryPoint& a = r.points(0);
  EXPECT_TRUE(a.rollup());
  EXPECT_EQ(TimeUtil::TimestampToNanoseconds(a.observed_at()), n_ - 5 * kH);
  EXPECT_EQ(a.reports(), 2u);
  EXPECT_EQ(a.seq(), 3u);
  EXPECT_EQ(a.threads(), 300u);  // last
  EXPECT_EQ(a.threads_min(), 100u);
  EXPECT_EQ(a.threads_max(), 300u);
  EXPECT_EQ(a.attach_latency_seconds(), 0.3);
  EXPECT_EQ(a.attach_latency_seconds_min(), 0.1);
  EXPECT_EQ(a.attach_latency_seconds_max(), 0.3);
  EXPECT_EQ(a.worst_risk(), 3);
  EXPECT_EQ(a.worst_risk_max(), 3);
  EXPECT_FALSE(a.has_pool_budget_ratio());  // no report of the hour had it
  EXPECT_FALSE(a.has_pool_budget_ratio_min());
  const v1::HistoryPoint& b = r.points(1);
  EXPECT_TRUE(b.rollup());
  EXPECT_EQ(TimeUtil::TimestampToNanoseconds(b.observed_at()), n_ - 4 * kH);
  EXPECT_EQ(b.reports(), 1u);
  EXPECT_EQ(b.seq(), 4u);
  EXPECT_EQ(b.threads_min(), 200u);
  for (int i = 2; i < 5; ++i) {
    EXPECT_FALSE(r.points(i).rollup());
    EXPECT_EQ(r.points(i).seq(), static_cast<uint64_t>(i + 3));
    EXPECT_EQ(r.points(i).reports(), 0u);
    EXPECT_FALSE(r.points(i).has_threads_min());
  }
  EXPECT_EQ(r.points(2).threads(), 400u);
  // Another probe kind: rollups keep no latency for it.
  r = History(n_ - 6 * kH, n_, 0, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER);
  ASSERT_EQ(r.points_size(), 5);
  EXPECT_FALSE(r.points(0).has_attach_latency_seconds());
  EXPECT_FALSE(r.points(0).has_attach_latency_seconds_max());
  EXPECT_EQ(r.points(0).threads(), 300u);
}

// A window wholly before the stored reports: every rollup hour starting in
// it. One starting 1 ns after an hour: that hour is not in it.
TEST_F(HistoryRollupTest, WindowOfDeletedReportsOnly) {
  v1::GetHostHistoryResponse r = History(n_ - 6 * kH, n_ - 3 * kH - 30 * kMin);
  EXPECT_EQ(r.matched_reports(), 0u);
  EXPECT_EQ(r.matched_rollups(), 2u);
  ASSERT_EQ(r.points_size(), 2);
  EXPECT_EQ(r.points(0).seq(), 3u);
  EXPECT_EQ(r.points(1).seq(), 4u);
  r = History(n_ - 5 * kH + 1, n_ - 3 * kH - 30 * kMin);
  ASSERT_EQ(r.points_size(), 1);
  EXPECT_EQ(r.points(0).seq(), 4u);
  r = History(n_ - 5 * kH, n_ - 4 * kH);  // [hour -5, hour -4)
  ASSERT_EQ(r.points_size(), 1);
  EXPECT_EQ(r.points(0).seq(), 3u);
}

// max_points 2 over 2 rollups and 3 reports: one of each (rollups get at
// least half), each the oldest of its kind.
TEST_F(HistoryRollupTest, MaxPointsSplitsBetweenRollupsAndReports) {
  v1::GetHostHistoryResponse r = History(n_ - 6 * kH, n_, 2);
  EXPECT_EQ(r.matched_reports(), 3u);
  EXPECT_EQ(r.matched_rollups(), 2u);
  ASSERT_EQ(r.points_size(), 2);
  EXPECT_TRUE(r.points(0).rollup());
  EXPECT_EQ(r.points(0).seq(), 3u);
  EXPECT_FALSE(r.points(1).rollup());
  EXPECT_EQ(r.points(1).seq(), 5u);
  // 4 points: both rollups and two reports (every second from seq 5).
  r = History(n_ - 6 * kH, n_, 4);
  ASSERT_EQ(r.points_size(), 4);
  EXPECT_EQ(r.points(1).seq(), 4u);
  EXPECT_EQ(r.points(2).seq(), 5u);
  EXPECT_EQ(r.points(3).seq(), 7u);
}

}  // namespace
}  // namespace tracehealth::server
