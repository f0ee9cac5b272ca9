#include "server/storage/conformance/rollup_conformance.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "proto/tracehealth/v1/report.pb.h"
#include "server/storage/rollup.h"

namespace tracehealth::server {

void PrintTo(const RollupBackend& backend, std::ostream* os) {
  *os << backend.name;
}

std::string RollupBackendName(
    const ::testing::TestParamInfo<RollupBackend>& info) {
  return info.param.name;
}

OpenedRollupStore RollupConformance::Open() {
  absl::StatusOr<OpenedRollupStore> opened = GetParam().open();
  EXPECT_TRUE(opened.ok()) << opened.status();
  if (!opened.ok() || opened->store == nullptr) {
    ADD_FAILURE() << "no store";
    return {};
  }
  return *std::move(opened);
}

namespace {

constexpr int64_t kH = kRollupHourNs;
constexpr int64_t kS = 1000000000;
constexpr int64_t kMin = 60 * kS;
// Hour 500,000 since the epoch (2027-01-15 08:00 UTC).
constexpr int64_t kHour0 = 500000 * kH;

struct Cols {
  std::optional<uint64_t> threads;
  std::optional<double> latency;
  std::optional<double> pool;
  std::optional<double> purge;
  int risk = 1;
  uint64_t digest = 7;  // equal digests: the later reports are heartbeats
};

// A report row as ingest makes it: the threads in the report (a full row's
// only place for them) and in ReportRow::threads (a heartbeat's).
ReportRow Row(const std::string& host, uint64_t seq, int64_t observed_ns,
              const Cols& c) {
  v1::HostReport rep;
  rep.set_host_id(host);
  rep.set_seq(seq);
  if (c.threads)
    rep.mutable_snapshot()->mutable_threads()->set_total(*c.threads);
  ReportRow r;
  r.host_id = host;
  r.seq = seq;
  r.observed_at_ns = observed_ns;
  r.received_at_ns = observed_ns + 1;
  r.worst_risk = c.risk;
  r.attach_latency_seconds = c.latency;
  r.pool_budget_ratio = c.pool;
  r.purge_seconds = c.purge;
  r.threads = c.threads;
  r.blob = rep.SerializeAsString();
  r.material_digest = c.digest;
  return r;
}

void Write(ReportStore& s, const std::vector<ReportRow>& rows) {
  absl::StatusOr<std::vector<WriteOutcome>> out = s.WriteBatch(rows);
  ASSERT_TRUE(out.ok()) << out.status();
  for (WriteOutcome o : *out) EXPECT_EQ(o, WriteOutcome::kStored);
}

RollupPass Roll(ReportStore& s, int64_t before_ns, int max_hours = 24) {
  absl::StatusOr<RollupPass> p = s.RollUp(before_ns, max_hours);
  EXPECT_TRUE(p.ok()) << p.status();
  return p.ok() ? *p : RollupPass{};
}

std::vector<RollupRow> Rollups(ReportStore& s, const std::string& host,
                               int64_t from = kHour0 - 1000 * kH,
                               int64_t to = kHour0 + 1000 * kH) {
  absl::StatusOr<std::vector<RollupRow>> r = s.ReadHostRollups(host, from, to);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *r : std::vector<RollupRow>{};
}

std::vector<int64_t> Hours(const std::vector<RollupRow>& rows) {
  std::vector<int64_t> out;
  for (const RollupRow& r : rows)
    out.push_back((r.hour_start_ns - kHour0) / kH);
  return out;
}

// Five reports of host h in hour 0, two of them whole and three heartbeats,
// and one of host g; worked out by hand:
//   seq observed  stored    threads latency pool  purge risk
//   1   +0 s      full      100     0.5     0.2   -     2
//   2   +15 s     heartbeat 90      0.75    0.25  -     (2, its full's)
//   3   +30 s     heartbeat 110     0.25    -     -     (2)
//   4   +45 s     full      95      0.625   0.3   1.5   3   (new content)
//   5   +60 s     heartbeat 97      -       0.375 -     (3)
// threads 90 / 110 / 97, latency 0.25 / 0.75 / 0.625 (seq 5 has none),
// pool 0.2 / 0.375 / 0.375, purge 1.5 / 1.5 / 1.5, risk max 3, last 3.
TEST_P(RollupConformance, MinMaxLastOverFullReportsAndHeartbeats) {
  OpenedRollupStore o = Open();
  ASSERT_NE(o.store, nullptr);
  ReportStore& s = *o.store;
  Write(s, {Row("h", 1, kHour0, {100, 0.5, 0.2, {}, 2})});
  Write(s, {Row("h", 2, kHour0 + 15 * kS, {90, 0.75, 0.25, {}, 2})});
  Write(s, {Row("h", 3, kHour0 + 30 * kS, {110, 0.25, {}, {}, 2})});
  Write(s, {Row("h", 4, kHour0 + 45 * kS, {95, 0.625, 0.3, 1.5, 3, 8})});
  Write(s, {Row("h", 5, kHour0 + 60 * kS, {97, {}, 0.375, {}, 3, 8})});
  Write(s, {Row("g", 1, kHour0 + 59 * kMin, {7, {}, {}, {}, 4})});
  // Hour 1 is not complete at 01:30: not rolled up.
  Write(s, {Row("h", 6, kHour0 + kH, {1, 9.0, 9.0, 9.0, 4, 9})});
  absl::StatusOr<HistoryRows> hist =
      s.ReadHostHistory("h", kHour0, kHour0 + kH, 100);
  ASSERT_TRUE(hist.ok()) << hist.status();
  ASSERT_EQ(hist->rows.size(), 5u);
  std::vector<bool> beats;
  for (const ReportRow& r : hist->rows) beats.push_back(r.heartbeat);
  EXPECT_EQ(beats, (std::vector<bool>{false, true, true, false, true}));

  RollupPass p = Roll(s, kHour0 + kH + 30 * kMin);
  EXPECT_EQ(p.hours, 1);
  EXPECT_EQ(p.rows, 2);
  EXPECT_EQ(p.rolled_through_ns, kHour0 + kH);
  EXPECT_FALSE(p.more);
  std::vector<RollupRow> h = Rollups(s, "h");
  ASSERT_EQ(h.size(), 1u);
  RollupRow want;
  want.host_id = "h";
  want.hour_start_ns = kHour0;
  want.reports = 5;
  want.first_seq = 1;
  want.last_seq = 5;
  want.threads = {90, 110, 97};
  want.attach_latency_seconds = {0.25, 0.75, 0.625};
  want.pool_budget_ratio = {0.2, 0.375, 0.375};
  want.purge_seconds = {1.5, 1.5, 1.5};
  want.max_worst_risk = 3;
  want.last_worst_risk = 3;
  EXPECT_EQ(h[0], want);
  std::vector<RollupRow> g = Rollups(s, "g");
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].reports, 1);
  EXPECT_EQ(g[0].threads, (RollupRange<uint64_t>{7, 7, 7}));
  EXPECT_EQ(g[0].max_worst_risk, 4);
  EXPECT_TRUE(Rollups(s, "nobody").empty());
}

// A host reporting every 25 min: its heartbeats go into chunks that span
// less than an hour (a new chunk at +100 and +175 min), so a pass finds
// each hour's beats among the chunks that start in the hour before it.
//   seq  observed  hour  threads
//   1    +0        0     100 (full)
//   2-3  +25, +50  0     101, 102
//   4-5  +75, +100 1     103, 104
//   6-8  +125..175 2     105, 106, 107
TEST_P(RollupConformance, ChunksSpanLessThanAnHour) {
  OpenedRollupStore o = Open();
  ASSERT_NE(o.store, nullptr);
  ReportStore& s = *o.store;
  for (uint64_t seq = 1; seq <= 8; ++seq) {
    const int64_t at = kHour0 + static_cast<int64_t>(seq - 1) * 25 * kMin;
    Write(s, {Row("h", seq, at, {99 + seq, 0.5, {}, {}, 2})});
  }
  absl::StatusOr<HistoryRows> hist =
      s.ReadHostHistory("h", kHour0, kHour0 + 3 * kH, 100);
  ASSERT_TRUE(hist.ok()) << hist.status();
  ASSERT_EQ(hist->rows.size(), 8u);
  EXPECT_FALSE(hist->rows[0].heartbeat);
  EXPECT_TRUE(hist->rows[7].heartbeat);
  RollupPass p = Roll(s, kHour0 + 3 * kH);
  EXPECT_EQ(p.hours, 3);
  std::vector<RollupRow> h = Rollups(s, "h");
  ASSERT_EQ(Hours(h), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(h[0].reports, 3);
  EXPECT_EQ(h[0].threads, (RollupRange<uint64_t>{100, 102, 102}));
  EXPECT_EQ(h[1].reports, 2);
  EXPECT_EQ(h[1].first_seq, 4u);
  EXPECT_EQ(h[1].threads, (RollupRange<uint64_t>{103, 104, 104}));
  EXPECT_EQ(h[2].reports, 3);
  EXPECT_EQ(h[2].last_seq, 8u);
  EXPECT_EQ(h[2].threads, (RollupRange<uint64_t>{105, 107, 107}));
}

// hh:59:59.999999999 and hh+1:00:00 fall in two hours; an hour is rolled
// once it ended at or before the pass's time, not 1 ns earlier.
TEST_P(RollupConformance, HourBoundary) {
  OpenedRollupStore o = Open();
  ASSERT_NE(o.store, nullptr);
  ReportStore& s = *o.store;
  Write(s, {Row("h", 1, kHour0 + kH - 1, {10, {}, {}, {}, 1, 1}),
            Row("h", 2, kHour0 + kH, {20, {}, {}, {}, 2, 2})});
  RollupPass p = Roll(s, kHour0 + 2 * kH - 1);
  EXPECT_EQ(p.hours, 1);
  EXPECT_EQ(p.rolled_through_ns, kHour0 + kH);
  std::vector<RollupRow> r = Rollups(s, "h");
  EXPECT_EQ(Hours(r), (std::vector<int64_t>{0}));
  p = Roll(s, kHour0 + 2 * kH);
  EXPECT_EQ(p.hours, 1);
  EXPECT_EQ(p.rows, 1);
  r = Rollups(s, "h");
  ASSERT_EQ(Hours(r), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(r[0].first_seq, 1u);
  EXPECT_EQ(r[0].threads.last, 10u);
  EXPECT_EQ(r[1].first_seq, 2u);
  EXPECT_EQ(r[1].threads.last, 20u);
  EXPECT_EQ(r[1].max_worst_risk, 2);
  // The read window is by hour start: [hour 1, hour 2) holds hour 1 only,
  // [hour 0 + 1 ns, ...) no longer hour 0.
  EXPECT_EQ(Hours(Rollups(s, "h", kHour0 + kH, kHour0 + 2 * kH)),
            (std::vector<int64_t>{1}));
  EXPECT_EQ(Hours(Rollups(s, "h", kHour0 + 1, kHour0 + 2 * kH)),
            (std::vector<int64_t>{1}));
  EXPECT_EQ(Hours(Rollups(s, "h", kHour0, kHour0 + kH)),
            (std::vector<int64_t>{0}));
}

TEST_P(RollupConformance, AbsentColumnsStayAbsent) {
  OpenedRollupStore o = Open();
  ASSERT_NE(o.store, nullptr);
  ReportStore& s = *o.store;
  Write(s, {Row("h", 1, kHour0, {{}, {}, {}, {}, 0}),
            Row("z", 1, kHour0, {0, 0.0, 0.0, 0.0, 0})});
  Roll(s, kHour0 + kH);
  std::vector<RollupRow> h = Rollups(s, "h");
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].threads, RollupRange<uint64_t>{});
  EXPECT_EQ(h[0].attach_latency_seconds, RollupRange<double>{});
  EXPECT_EQ(h[0].pool_budget_ratio, RollupRange<double>{});
  EXPECT_EQ(h[0].purge_seconds, RollupRange<double>{});
  std::vector<RollupRow> z = Rollups(s, "z");  // zeros are values
  ASSERT_EQ(z.size(), 1u);
  EXPECT_EQ(z[0].threads, (RollupRange<uint64_t>{0, 0, 0}));
  EXPECT_EQ(z[0].purge_seconds, (RollupRange<double>{0.0, 0.0, 0.0}));
}

// A rerun writes nothing; a report observed in a rolled hour but stored
// after the pass leaves that hour's rollup as it was (it is still read raw).
TEST_P(RollupConformance, IdempotentAndLateReportsLeaveTheHour) {
  OpenedRollupStore o = Open();
  ASSERT_NE(o.store, nullptr);
  ReportStore& s = *o.store;
  Write(s, {Row("h", 1, kHour0 + 10 * kMin, {10, {}, {}, {}, 1, 1})});
  EXPECT_EQ(Roll(s, kHour0 + kH).rows, 1);
  const std::vector<RollupRow> before = Rollups(s, "h");
  RollupPass again = Roll(s, kHour0 + kH);
  EXPECT_EQ(again.hours, 0);
  EXPECT_EQ(again.rows, 0);
  EXPECT_EQ(again.rolled_through_ns, kHour0 + kH);
  Write(s, {Row("h", 2, kHour0 + 20 * kMin, {99, {}, {}, {}, 4, 2})});
  again = Roll(s, kHour0 + kH + 59 * kMin);
  EXPECT_EQ(again.rows, 0);
  EXPECT_EQ(Rollups(s, "h"), before);
  EXPECT_EQ(before[0].reports, 1);
  absl::StatusOr<HistoryRows> hist =
      s.ReadHostHistory("h", kHour0, kHour0 + kH, 10);
  ASSERT_TRUE(hist.ok());
  EXPECT_EQ(hist->matched, 2);
  EXPECT_EQ(s.RollUp(kHour0, 0).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// The first pass starts at the oldest observation's hour; max_hours bounds a
// call; an empty store's first pass sets the watermark to the pass's hour.
TEST_P(RollupConformance, FirstPassAndMaxHours) {
  OpenedRollupStore o = Open();
  ASSERT_NE(o.store, nullptr);
  ReportStore& s = *o.store;
  Write(s, {Row("h", 1, kHour0 + 5, {}), Row("h", 2, kHour0 + 2 * kH + 5, {})});
  RollupPass p = Roll(s, kHour0 + 3 * kH, 2);
  EXPECT_EQ(p.hours, 2);
  EXPECT_EQ(p.rows, 1);  // hour 1 has no report: no row
  EXPECT_TRUE(p.more);
  EXPECT_EQ(p.rolled_through_ns, kHour0 + 2 * kH);
  p = Roll(s, kHour0 + 3 * kH, 2);
  EXPECT_EQ(p.hours, 1);
  EXPECT_FALSE(p.more);
  EXPECT_EQ(Hours(Rollups(s, "h")), (std::vector<int64_t>{0, 2}));

  OpenedRollupStore e = Open();
  ASSERT_NE(e.store, nullptr);
  p = Roll(*e.store, kHour0 + 30 * kMin);
  EXPECT_EQ(p.hours, 0);
  EXPECT_EQ(p.rolled_through_ns, kHour0);
  // A report of an earlier hour stored after it is never rolled up.
  Write(*e.store, {Row("h", 1, kHour0 - kH, {})});
  p = Roll(*e.store, kHour0 + kH);
  EXPECT_EQ(p.hours, 1);
  EXPECT_EQ(p.rows, 0);
}

TEST_P(RollupConformance, WatermarkSurvivesAReopen) {
  OpenedRollupStore o = Open();
  ASSERT_NE(o.store, nullptr);
  Write(*o.store, {Row("h", 1, kHour0 + 5, {1, {}, {}, {}, 1, 1}),
                   Row("h", 2, kHour0 + kH + 5, {2, {}, {}, {}, 1, 2})});
  EXPECT_EQ(Roll(*o.store, kHour0 + kH).rows, 1);
  o.store.reset();
  absl::StatusOr<std::unique_ptr<ReportStore>> again = o.reopen();
  ASSERT_TRUE(again.ok()) << again.status();
  ReportStore& s = **again;
  RollupPass p = Roll(s, kHour0 + kH);  // nothing redone
  EXPECT_EQ(p.hours, 0);
  EXPECT_EQ(p.rolled_through_ns, kHour0 + kH);
  p = Roll(s, kHour0 + 2 * kH);  // nothing skipped
  EXPECT_EQ(p.hours, 1);
  EXPECT_EQ(p.rows, 1);
  std::vector<RollupRow> r = Rollups(s, "h");
  ASSERT_EQ(Hours(r), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(r[0].reports, 1);
  EXPECT_EQ(r[1].threads.last, 2u);
}

// Rollups go by hour start: the cutoff's own hour stays, 1 ns later it goes.
TEST_P(RollupConformance, RollupRetentionBothSidesOfTheCutoff) {
  OpenedRollupStore o = Open();
  ASSERT_NE(o.store, nullptr);
  ReportStore& s = *o.store;
  for (uint64_t i = 0; i < 3; ++i) {
    Write(s, {Row("h", i + 1, kHour0 + static_cast<int64_t>(i) * kH, {})});
  }
  Roll(s, kHour0 + 3 * kH);
  ASSERT_EQ(Hours(Rollups(s, "h")), (std::vector<int64_t>{0, 1, 2}));
  absl::StatusOr<int64_t> n = s.DeleteRollupsBefore(kHour0 + kH);
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(*n, 1);
  EXPECT_EQ(Hours(Rollups(s, "h")), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(*s.DeleteRollupsBefore(kHour0 + kH), 0);
  EXPECT_EQ(*s.DeleteRollupsBefore(kHour0 + kH + 1), 1);
  EXPECT_EQ(Hours(Rollups(s, "h")), (std::vector<int64_t>{2}));
  // The watermark stays: the deleted hours are not rolled again.
  EXPECT_EQ(Roll(s, kHour0 + 3 * kH).hours, 0);
}

// Raw retention keeps its side of the cutoff (received at the cutoff: kept;
// 1 ns later: deleted) and the rollups of the deleted reports stay: a
// window over both reads rollups where the reports are gone and reports
// where they live.
TEST_P(RollupConformance, RawRetentionLeavesTheRollups) {
  OpenedRollupStore o = Open();
  ASSERT_NE(o.store, nullptr);
  ReportStore& s = *o.store;
  // Hours 0..3, one report each (digests differ: all whole), received
  // 1 ns after their observation.
  for (uint64_t i = 0; i < 4; ++i) {
    Write(s, {Row("h", i + 1, kHour0 + static_cast<int64_t>(i) * kH,
                  {100 + i, {}, {}, {}, 1, 10 + i})});
  }
  EXPECT_EQ(Roll(s, kHour0 + 4 * kH).rows, 4);
  // Seq 2 was received at hour 1 + 1 ns: a cutoff there keeps it.
  absl::StatusOr<int64_t> n = s.DeleteReportsReceivedBefore(kHour0 + kH + 1);
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(*n, 1);
  EXPECT_EQ(*s.CountReports("h"), 3);
  EXPECT_EQ(*s.DeleteReportsReceivedBefore(kHour0 + kH + 2), 1);
  EXPECT_EQ(*s.CountReports("h"), 2);
  absl::StatusOr<HistoryRows> raw =
      s.ReadHostHistory("h", kHour0, kHour0 + 4 * kH, 100);
  ASSERT_TRUE(raw.ok());
  ASSERT_EQ(raw->rows.size(), 2u);
  EXPECT_EQ(raw->rows[0].seq, 3u);
  std::vector<RollupRow> r = Rollups(s, "h", kHour0, kHour0 + 4 * kH);
  ASSERT_EQ(Hours(r), (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(r[0].threads.last, 100u);
  EXPECT_EQ(r[1].threads.last, 101u);
}

}  // namespace
}  // namespace tracehealth::server
