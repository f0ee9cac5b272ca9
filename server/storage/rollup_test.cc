#include "server/storage/rollup.h"

#include <limits>

#include "gtest/gtest.h"
#include "proto/tracehealth/v1/report.pb.h"

namespace tracehealth::server {
namespace {

constexpr int64_t kH = kRollupHourNs;

ReportRow Row(const std::string& host, uint64_t seq, int64_t observed_ns) {
  ReportRow r;
  r.host_id = host;
  r.seq = seq;
  r.observed_at_ns = observed_ns;
  r.received_at_ns = observed_ns + 1;
  return r;
}

TEST(HourStartTest, RoundsDownOnTheEpoch) {
  EXPECT_EQ(HourStart(0), 0);
  EXPECT_EQ(HourStart(kH - 1), 0);
  EXPECT_EQ(HourStart(kH), kH);
  EXPECT_EQ(HourStart(5 * kH + 7), 5 * kH);
  EXPECT_EQ(HourStart(-1), -kH);  // before 1970: down, not towards zero
  EXPECT_EQ(HourStart(-kH), -kH);
}

TEST(ThreadsOfReportTest, FromTheSnapshot) {
  v1::HostReport r;
  EXPECT_EQ(ThreadsOfReport(r.SerializeAsString()), std::nullopt);
  r.mutable_snapshot()->mutable_threads()->set_total(0);
  EXPECT_EQ(ThreadsOfReport(r.SerializeAsString()), 0u);  // present, 0
  r.mutable_snapshot()->mutable_threads()->set_total(20417);
  EXPECT_EQ(ThreadsOfReport(r.SerializeAsString()), 20417u);
  EXPECT_EQ(ThreadsOfReport("\xff\xff\xff"), std::nullopt);  // no parse
}

// Five reports of one hour, added out of order; worked out by hand:
//   seq observed  threads latency pool  purge risk
//   10  h+10 s    100     0.50    -     2.0   1
//   11  h+20 s    -       0.25    0.9   -     4
//   12  h+30 s    90      -       0.7   -     2
//   13  h+40 s    120     0.75    -     -     1
//   14  h+40 s    -       -       -     -     3   (same time: seq orders)
// threads 90/120/120 (last carrying: seq 13), latency 0.25/0.75/0.75,
// pool 0.7/0.9/0.7 (seq 12), purge 2.0/2.0/2.0, risk max 4, last 3 (seq 14).
TEST(RollupFolderTest, MinMaxLastByHand) {
  const int64_t h = 400000 * kH;
  const int64_t s = 1000000000;
  ReportRow r10 = Row("a", 10, h + 10 * s);
  r10.threads = 100;
  r10.attach_latency_seconds = 0.5;
  r10.purge_seconds = 2.0;
  r10.worst_risk = 1;
  ReportRow r11 = Row("a", 11, h + 20 * s);
  r11.attach_latency_seconds = 0.25;
  r11.pool_budget_ratio = 0.9;
  r11.worst_risk = 4;
  r11.heartbeat = true;
  ReportRow r12 = Row("a", 12, h + 30 * s);
  r12.threads = 90;
  r12.pool_budget_ratio = 0.7;
  r12.worst_risk = 2;
  ReportRow r13 = Row("a", 13, h + 40 * s);
  r13.threads = 120;
  r13.attach_latency_seconds = 0.75;
  r13.worst_risk = 1;
  ReportRow r14 = Row("a", 14, h + 40 * s);
  r14.worst_risk = 3;
  RollupFolder f;
  for (const ReportRow* r : {&r13, &r10, &r14, &r12, &r11}) f.Add(*r);
  std::vector<RollupRow> out = f.Take();
  ASSERT_EQ(out.size(), 1u);
  const RollupRow& x = out[0];
  EXPECT_EQ(x.host_id, "a");
  EXPECT_EQ(x.hour_start_ns, h);
  EXPECT_EQ(x.reports, 5);
  EXPECT_EQ(x.first_seq, 10u);
  EXPECT_EQ(x.last_seq, 14u);
  EXPECT_EQ(x.threads, (RollupRange<uint64_t>{90, 120, 120}));
  EXPECT_EQ(x.attach_latency_seconds, (RollupRange<double>{0.25, 0.75, 0.75}));
  EXPECT_EQ(x.pool_budget_ratio, (RollupRange<double>{0.7, 0.9, 0.7}));
  EXPECT_EQ(x.purge_seconds, (RollupRange<double>{2.0, 2.0, 2.0}));
  EXPECT_EQ(x.max_worst_risk, 4);
  EXPECT_EQ(x.last_worst_risk, 3);
  EXPECT_TRUE(f.Take().empty());
}

TEST(RollupFolderTest, AbsentColumnsStayAbsent) {
  RollupFolder f;
  ReportRow r = Row("a", 1, 3 * kH);
  r.threads = 0;  // a zero is a value
  f.Add(r);
  std::vector<RollupRow> out = f.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].threads, (RollupRange<uint64_t>{0, 0, 0}));
  EXPECT_EQ(out[0].attach_latency_seconds, RollupRange<double>{});
  EXPECT_FALSE(out[0].pool_budget_ratio.min.has_value());
  EXPECT_FALSE(out[0].purge_seconds.last.has_value());
  EXPECT_EQ(out[0].reports, 1);
}

// Both sides of an hour boundary, and of a host: separate rows, ordered by
// host then hour.
TEST(RollupFolderTest, HourBoundaryAndHosts) {
  const int64_t h = 7 * kH;
  RollupFolder f;
  f.Add(Row("b", 5, h));           // hh+1:00:00 of hour 6 -> hour 7
  f.Add(Row("b", 4, h - 1));       // hh:59:59.999999999 -> hour 6
  f.Add(Row("a", 9, h + kH - 1));  // the last ns of hour 7
  std::vector<RollupRow> out = f.Take();
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].host_id, "a");
  EXPECT_EQ(out[0].hour_start_ns, h);
  EXPECT_EQ(out[1].host_id, "b");
  EXPECT_EQ(out[1].hour_start_ns, h - kH);
  EXPECT_EQ(out[1].first_seq, 4u);
  EXPECT_EQ(out[1].reports, 1);
  EXPECT_EQ(out[2].hour_start_ns, h);
  EXPECT_EQ(out[2].first_seq, 5u);
  EXPECT_EQ(out[2].last_seq, 5u);
}

// first/last by observation time, not by seq (a restarted agent's seqs).
TEST(RollupFolderTest, FirstAndLastByObservationTime) {
  RollupFolder f;
  ReportRow late_seq = Row("a", 100, 10);
  late_seq.threads = 7;
  ReportRow early_seq = Row("a", 2, 20);
  early_seq.threads = 8;
  f.Add(late_seq);
  f.Add(early_seq);
  std::vector<RollupRow> out = f.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].first_seq, 100u);
  EXPECT_EQ(out[0].last_seq, 2u);
  EXPECT_EQ(out[0].threads.last, 8u);
}

}  // namespace
}  // namespace tracehealth::server
