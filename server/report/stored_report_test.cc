#include "server/report/stored_report.h"

#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace tracehealth::server {
namespace {

v1::HostReport Report() {
  v1::HostReport r;
  r.set_host_id("db-1");
  r.set_seq(12);
  (*r.mutable_labels())["role"] = "db";
  r.mutable_snapshot()->mutable_threads()->set_total(400000);
  return r;
}

TEST(StoredReportTest, ParsesOnFirstReadAndSharesTheResult) {
  std::shared_ptr<const StoredReport> s = StoredReport::Of(Report());
  EXPECT_EQ(s->host_id(), "db-1");
  EXPECT_EQ(s->seq(), 12u);
  std::shared_ptr<const v1::HostReport> r = s->report();
  EXPECT_EQ(r->SerializeAsString(), Report().SerializeAsString());
  EXPECT_EQ(s->report().get(), r.get());
  s.reset();  // the parsed report outlives its StoredReport
  EXPECT_EQ(r->snapshot().threads().total(), 400000u);
}

TEST(StoredReportTest, ConcurrentFirstReadsParseOnce) {
  auto s = StoredReport::Of(Report());
  std::vector<const v1::HostReport*> seen(8);
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] { seen[i] = s->report().get(); });
  }
  for (auto& t : threads) t.join();
  for (const v1::HostReport* p : seen) EXPECT_EQ(p, seen[0]);
  EXPECT_EQ(seen[0]->labels().at("role"), "db");
}

TEST(StoredReportTest, BytesThatDoNotParseGiveIdentityOnly) {
  StoredReport s("h", 3, "\xff\xff\xff");
  EXPECT_EQ(s.report()->host_id(), "h");
  EXPECT_EQ(s.report()->seq(), 3u);
  EXPECT_FALSE(s.report()->has_snapshot());
}

}  // namespace
}  // namespace tracehealth::server
