#include "server/housekeeper.h"

#include <utility>

#include "gtest/gtest.h"
#include "server/storage/controlled_report_store.h"
#include "server/storage/sqlite/sqlite_storage.h"
#include "tests/util/subprocess.h"

namespace tracehealth::server {
namespace {

TEST(ParseRetentionTest, Units) {
  EXPECT_EQ(*ParseRetention("30d"), absl::Hours(720));
  EXPECT_EQ(*ParseRetention("12h"), absl::Hours(12));
  EXPECT_EQ(*ParseRetention("90m"), absl::Minutes(90));
  EXPECT_EQ(*ParseRetention("3600s"), absl::Seconds(3600));
  EXPECT_EQ(*ParseRetention("1s"), absl::Seconds(1));  // the shortest
  const std::pair<const char*, const char*> bad[] = {
      {"", "bad retention \"\""},
      {"d", "bad retention \"d\""},
      {"0d", "bad retention \"0d\": want e.g. 30d, 12h, 90m"},
      {"-1d", "bad retention \"-1d\": want e.g. 30d, 12h, 90m"},
      {"5w", "bad retention unit in \"5w\": use s, m, h or d"},
      {"x1d", "bad retention \"x1d\": want e.g. 30d, 12h, 90m"},
  };
  for (const auto& [text, message] : bad) {
    absl::StatusOr<absl::Duration> r = ParseRetention(text);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_EQ(r.status().message(), message) << text;
  }
}

TEST(HousekeeperTest, RetentionUsesTheInjectedClock) {
  auto storage = SqliteStorage::Open(testing::NewTempDir("hk") + "/t.db");
  ASSERT_TRUE(storage.ok());
  const int64_t day = 86400LL * 1000000000LL;
  std::vector<ReportRow> rows;
  for (uint64_t seq = 1; seq <= 10; ++seq) {
    ReportRow r;
    r.host_id = "h";
    r.seq = seq;
    r.observed_at_ns = static_cast<int64_t>(seq) * day;  // day 1 .. day 10
    r.received_at_ns = r.observed_at_ns + 1;
    r.blob = "x";
    rows.push_back(r);
  }
  ASSERT_TRUE((*storage)->WriteBatch(rows).ok());
  HostIndex index;
  ServerMetrics metrics;
  Housekeeper::Options opts;
  opts.retention = absl::Hours(24 * 3);
  opts.now = [] { return absl::UnixEpoch() + absl::Hours(24 * 10); };
  Housekeeper hk(storage->get(), &index, &metrics, opts);
  auto deleted = hk.RunRetention();
  ASSERT_TRUE(deleted.ok());
  EXPECT_EQ(deleted->reports_deleted, 6);  // days 1..6 are older than day 7
  EXPECT_EQ(*(*storage)->CountReports("h"), 4);
  hk.UpdateGauges();
}

}  // namespace
}  // namespace tracehealth::server

namespace tracehealth::server {
namespace {

constexpr int64_t kDay = 86400LL * 1000000000LL;

// Ten rows of host h received on days 1..10 (1 ns past midnight).
void TenDays(ReportStore& store) {
  std::vector<ReportRow> rows;
  for (uint64_t seq = 1; seq <= 10; ++seq) {
    ReportRow r;
    r.host_id = "h";
    r.seq = seq;
    r.observed_at_ns = static_cast<int64_t>(seq) * kDay;
    r.received_at_ns = r.observed_at_ns + 1;
    r.blob = "x";
    rows.push_back(r);
  }
  ASSERT_TRUE(store.WriteBatch(rows).ok());
}

TEST(HousekeeperTest, CutoffIsRoundedDownToTheStoresGranularity) {
  auto storage = SqliteStorage::Open(testing::NewTempDir("hk-round") + "/t.db");
  ASSERT_TRUE(storage.ok());
  TenDays(**storage);
  ControlledReportStore store(storage->get());
  store.granularity_ = absl::Hours(24);
  Housekeeper::Options opts;
  opts.retention = absl::Hours(24 * 3);
  // Now is day 10 12:00: now - retention is day 7 12:00, rounded down to
  // day 7 00:00. Days 1..6 go; day 7's row (received 1 ns after midnight)
  // stays, which a cutoff at 12:00 would have deleted.
  opts.now = [] { return absl::UnixEpoch() + absl::Hours(24 * 10 + 12); };
  Housekeeper hk(&store, nullptr, nullptr, opts);
  auto deleted = hk.RunRetention();
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  EXPECT_EQ(deleted->reports_deleted, 6);
  EXPECT_EQ(*(*storage)->CountReports("h"), 4);
  // Without a granularity the cutoff is exact: day 7 goes too.
  store.granularity_ = absl::ZeroDuration();
  EXPECT_EQ(hk.RunRetention()->reports_deleted, 1);
}

TEST(HousekeeperTest, OnlyTheLeaseHolderRunsRetention) {
  auto storage = SqliteStorage::Open(testing::NewTempDir("hk-lease") + "/t.db");
  ASSERT_TRUE(storage.ok());
  Housekeeper::Options a_opts;
  a_opts.leases = storage->get();
  a_opts.lease_holder = "replica-a";
  Housekeeper::Options b_opts = a_opts;
  b_opts.lease_holder = "replica-b";
  HostIndex index;
  Housekeeper a(storage->get(), &index, nullptr, a_opts);
  Housekeeper b(storage->get(), &index, nullptr, b_opts);
  EXPECT_TRUE(a.HoldsRetentionLease());
  EXPECT_FALSE(b.HoldsRetentionLease());
  EXPECT_TRUE(a.HoldsRetentionLease());  // renewed
  // A stopping holder releases the lease at once.
  a.Start();
  a.Stop();
  EXPECT_TRUE(b.HoldsRetentionLease());
  EXPECT_FALSE(a.HoldsRetentionLease());
}

}  // namespace
}  // namespace tracehealth::server
