// The housekeeper's rollups: rolled up before the reports are deleted, a
// report of an hour not rolled up is never deleted, rollups have their own
// retention, a failed rollup deletes nothing, and only the lease holder
// runs them.
#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "server/housekeeper.h"
#include "server/storage/controlled_report_store.h"
#include "server/storage/rollup.h"
#include "server/storage/sqlite/sqlite_storage.h"
#include "tests/util/subprocess.h"

namespace tracehealth::server {
namespace {

constexpr int64_t kH = kRollupHourNs;
constexpr int64_t kDay = 24 * kH;
constexpr int64_t kMin = kH / 60;

std::unique_ptr<SqliteStorage> NewStore(const std::string& name) {
  auto s = SqliteStorage::Open(testing::NewTempDir(name) + "/t.db");
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *std::move(s) : nullptr;
}

ReportRow Row(uint64_t seq, int64_t observed_ns, int64_t received_ns) {
  ReportRow r;
  r.host_id = "h";
  r.seq = seq;
  r.observed_at_ns = observed_ns;
  r.received_at_ns = received_ns;
  r.worst_risk = static_cast<int>(seq % 5);
  r.blob = "x";
  return r;
}

// Ten reports on days 1..10 (1 ns past midnight); retention 3 days at day
// 10 12:00: days 1..7 go, and their rollups were written first.
TEST(HousekeeperRollupTest, RollsUpBeforeDeletingReports) {
  auto storage = NewStore("hk-order");
  ASSERT_NE(storage, nullptr);
  std::vector<ReportRow> rows;
  for (uint64_t d = 1; d <= 10; ++d)
    rows.push_back(Row(d, d * kDay, d * kDay + 1));
  ASSERT_TRUE(storage->WriteBatch(rows).ok());
  ControlledReportStore store(storage.get());
  Housekeeper::Options opts;
  opts.retention = absl::Hours(24 * 3);
  opts.rollup_retention = absl::Hours(24 * 5);
  opts.rollup_max_hours = 48;
  opts.now = [] { return absl::FromUnixNanos(10 * kDay + 12 * kH); };
  Housekeeper hk(&store, nullptr, nullptr, opts);
  absl::StatusOr<Housekeeper::RetentionRun> run = hk.RunRetention();
  ASSERT_TRUE(run.ok()) << run.status();
  // Hours from day 1 00:00 to day 10 11:00 (now - 15 min is 11:45): 9 days
  // and 11 hours, in calls of 48 hours: 5 calls.
  EXPECT_EQ(run->rollup_hours, 9 * 24 + 11);
  EXPECT_EQ(run->rollup_rows, 10);
  EXPECT_EQ(run->rolled_through_ns, 10 * kDay + 11 * kH);
  EXPECT_EQ(run->reports_deleted, 7);
  // Rollups of days 1..5 start before 5 days ago (day 5 12:00): 5 go.
  EXPECT_EQ(run->rollups_deleted, 5);
  EXPECT_EQ(store.calls_,
            (std::vector<std::string>{"RollUp", "RollUp", "RollUp", "RollUp",
                                      "RollUp", "DeleteReportsReceivedBefore",
                                      "DeleteRollupsBefore"}));
  absl::StatusOr<std::vector<RollupRow>> r =
      storage->ReadHostRollups("h", 0, 11 * kDay);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->size(), 5u);  // days 6..10
  EXPECT_EQ((*r)[0].hour_start_ns, 6 * kDay);
  EXPECT_EQ((*r)[0].first_seq, 6u);  // its report is deleted, its rollup not
  EXPECT_EQ(*storage->CountReports("h"), 3);
}

// A retention shorter than the time to roll an hour up: the report cutoff
// stays at the watermark - 1 h (observation lead), so reports of the hour
// not rolled up stay. Received at the cutoff: kept; 1 ns before: deleted.
TEST(HousekeeperRollupTest, NeverDeletesAReportWhoseHourIsNotRolledUp) {
  auto storage = NewStore("hk-clamp");
  ASSERT_NE(storage, nullptr);
  const int64_t h = 1000 * kH;
  ASSERT_TRUE(storage
                  ->WriteBatch({Row(1, h - kH - 2, h - kH - 1),
                                Row(2, h - kH - 1, h - kH),
                                Row(3, h + 5 * kMin, h + 5 * kMin + 1),
                                Row(4, h + 10 * kMin, h + 10 * kMin + 1)})
                  .ok());
  ControlledReportStore store(storage.get());
  Housekeeper::Options opts;
  opts.retention = absl::Seconds(1);
  opts.now = [=] { return absl::FromUnixNanos(h + 30 * kMin); };
  Housekeeper hk(&store, nullptr, nullptr, opts);
  absl::StatusOr<Housekeeper::RetentionRun> run = hk.RunRetention();
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->rolled_through_ns, h);  // hour h - 1 h done, hour h not
  EXPECT_EQ(store.raw_cutoffs_, (std::vector<int64_t>{h - kH}));
  EXPECT_EQ(run->reports_deleted, 1);  // seq 1; seq 3 (hour h) stays
  EXPECT_EQ(*storage->CountReports("h"), 3);
  // Once hour h is rolled up (at h + 1 h 15 min) it may go.
  opts.now = [=] { return absl::FromUnixNanos(h + kH + 15 * kMin); };
  Housekeeper later(&store, nullptr, nullptr, opts);
  run = later.RunRetention();
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->rolled_through_ns, h + kH);
  EXPECT_EQ(store.raw_cutoffs_.back(), h);
  // Seq 2 goes; seq 3 (received h + 5 min + 1 ns) waits until the
  // watermark is an hour past its receipt.
  EXPECT_EQ(run->reports_deleted, 1);
  EXPECT_EQ(*storage->CountReports("h"), 2);
}

TEST(HousekeeperRollupTest, AFailedRollupDeletesNothing) {
  auto storage = NewStore("hk-fail");
  ASSERT_NE(storage, nullptr);
  ASSERT_TRUE(
      storage
          ->WriteBatch({Row(1, kDay, kDay + 1), Row(2, 2 * kDay, 2 * kDay + 1)})
          .ok());
  ControlledReportStore store(storage.get());
  store.fail_rollup_ = true;
  Housekeeper::Options opts;
  opts.retention = absl::Hours(1);
  opts.now = [] { return absl::FromUnixNanos(30 * kDay); };
  Housekeeper hk(&store, nullptr, nullptr, opts);
  absl::StatusOr<Housekeeper::RetentionRun> run = hk.RunRetention();
  EXPECT_EQ(run.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(store.calls_, std::vector<std::string>{"RollUp"});
  EXPECT_EQ(*storage->CountReports("h"), 2);
}

// Only the holder of the "retention" lease rolls up (and deletes).
TEST(HousekeeperRollupTest, OnlyTheLeaseHolderRollsUp) {
  auto storage = NewStore("hk-lease");
  ASSERT_NE(storage, nullptr);
  ASSERT_TRUE(storage->WriteBatch({Row(1, kDay, kDay + 1)}).ok());
  ControlledReportStore a_store(storage.get());
  ControlledReportStore b_store(storage.get());
  Housekeeper::Options opts;
  opts.leases = storage.get();
  opts.gauge_interval = absl::Milliseconds(10);
  opts.rollup_max_hours = 100;  // one RollUp call
  opts.now = [] { return absl::FromUnixNanos(3 * kDay); };
  opts.lease_holder = "replica-a";
  Housekeeper a(&a_store, nullptr, nullptr, opts);
  opts.lease_holder = "replica-b";
  Housekeeper b(&b_store, nullptr, nullptr, opts);
  ASSERT_TRUE(a.HoldsRetentionLease());
  b.Start();
  absl::SleepFor(absl::Milliseconds(100));  // ten rounds of b's loop
  b.Stop();
  EXPECT_TRUE(b_store.calls_.empty());
  ASSERT_TRUE(storage->ReleaseLease("retention", "replica-a").ok());
  Housekeeper b2(&b_store, nullptr, nullptr, opts);
  b2.Start();  // its first round runs retention at once
  absl::SleepFor(absl::Milliseconds(100));
  b2.Stop();
  ASSERT_GE(b_store.calls_.size(), 3u);
  EXPECT_EQ(b_store.calls_[0], "RollUp");
  EXPECT_EQ(b_store.calls_[1], "DeleteReportsReceivedBefore");
  EXPECT_EQ(b_store.calls_[2], "DeleteRollupsBefore");
  auto r = storage->ReadHostRollups("h", 0, 3 * kDay);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->size(), 1u);
}

}  // namespace
}  // namespace tracehealth::server
