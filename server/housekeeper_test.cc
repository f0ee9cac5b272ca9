#include "server/housekeeper.h"

#include "gtest/gtest.h"
#include "server/storage/sqlite/sqlite_storage.h"
#include "tests/util/subprocess.h"

namespace tracehealth::server {
namespace {

TEST(ParseRetentionTest, Units) {
  EXPECT_EQ(*ParseRetention("30d"), absl::Hours(720));
  EXPECT_EQ(*ParseRetention("12h"), absl::Hours(12));
  EXPECT_EQ(*ParseRetention("90m"), absl::Minutes(90));
  EXPECT_EQ(*ParseRetention("3600s"), absl::Seconds(3600));
  EXPECT_FALSE(ParseRetention("").ok());
  EXPECT_FALSE(ParseRetention("d").ok());
  EXPECT_FALSE(ParseRetention("0d").ok());
  EXPECT_FALSE(ParseRetention("-1d").ok());
  EXPECT_FALSE(ParseRetention("5w").ok());
  EXPECT_FALSE(ParseRetention("x1d").ok());
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
  EXPECT_EQ(*deleted, 6);  // days 1..6 are older than day 7
  EXPECT_EQ(*(*storage)->CountReports("h"), 4);
  hk.UpdateGauges();
}

}  // namespace
}  // namespace tracehealth::server
