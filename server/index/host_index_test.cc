#include "server/index/host_index.h"

#include <set>

#include "gtest/gtest.h"
#include "server/index/host_record_codec.h"
#include "server/storage/sqlite/sqlite_storage.h"
#include "tests/util/subprocess.h"

namespace tracehealth::server {
namespace {

v1::HostReport Report(const std::string& host, uint64_t seq,
                      const std::string& role) {
  v1::HostReport r;
  r.set_host_id(host);
  r.set_seq(seq);
  (*r.mutable_labels())["role"] = role;
  r.mutable_snapshot()->mutable_threads()->set_total(1000 * seq);
  return r;
}

CommittedReport Committed(const v1::HostReport& r, absl::Time at) {
  return {StoredReport::Of(r), at};
}

TEST(HostIndexTest, ApplyKeepsNewestSeqAndCounts) {
  HostIndex index;
  absl::Time t0 = absl::FromUnixSeconds(1000);
  index.Apply({Committed(Report("a", 2, "db"), t0),
               Committed(Report("a", 1, "old"), t0 + absl::Seconds(5)),
               Committed(Report("b", 1, "web"), t0)});
  ASSERT_EQ(index.size(), 2u);
  auto a = index.Get("a");
  ASSERT_TRUE(a.has_value());
  // The replayed seq 1 counts as a report but does not replace seq 2.
  EXPECT_EQ(a->record.seq, 2u);
  EXPECT_EQ(a->record.labels.Find("role"), absl::string_view("db"));
  EXPECT_EQ(a->record.threads(), 2000u);
  EXPECT_EQ(a->reports, 2u);
  EXPECT_EQ(a->first_seen, t0);
  EXPECT_EQ(a->last_seen, t0 + absl::Seconds(5));
  EXPECT_EQ(index.LatestSeq("a"), 2u);
  EXPECT_EQ(index.LatestSeq("zzz"), 0u);
  EXPECT_FALSE(index.Get("zzz").has_value());
  EXPECT_FALSE(index.Visit("zzz", [](const HostEntry&) { FAIL(); }));
}

TEST(HostIndexTest, ForEachVisitsEveryHostOnce) {
  HostIndex index;
  std::vector<CommittedReport> batch;
  for (int i = 0; i < 500; ++i) {
    batch.push_back(Committed(Report("h" + std::to_string(i), 1, "x"),
                              absl::FromUnixSeconds(i)));
  }
  index.Apply(batch);
  std::multiset<std::string> seen;
  index.ForEach(
      [&](const std::string& id, const HostEntry&) { seen.insert(id); });
  EXPECT_EQ(seen.size(), 500u);
  EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()).size(), 500u);
  // The shards together hold every host, each host in one of them.
  size_t in_shards = 0;
  for (int s = 0; s < HostIndex::kShards; ++s) {
    size_t n = 0;
    index.ForEachInShard(s, [&](const std::string&, const HostEntry&) { ++n; });
    // 500 hosts over 16 shards: none empty, none with most of them.
    EXPECT_GT(n, 0u) << s;
    EXPECT_LT(n, 100u) << s;
    in_shards += n;
  }
  EXPECT_EQ(in_shards, 500u);
}

TEST(HostIndexTest, RebuildsFromStorage) {
  auto storage = SqliteStorage::Open(testing::NewTempDir("idx") + "/t.db");
  ASSERT_TRUE(storage.ok());
  std::vector<ReportRow> rows;
  for (uint64_t seq = 1; seq <= 3; ++seq) {
    ReportRow row;
    row.host_id = "h1";
    row.seq = seq;
    row.received_at_ns = seq * 1000000000;
    row.blob = Report("h1", seq, seq == 3 ? "db" : "x").SerializeAsString();
    rows.push_back(row);
  }
  ASSERT_TRUE((*storage)->WriteBatch(rows).ok());
  HostIndex index;
  HostIndex::LoadStats stats;
  ASSERT_TRUE(index.LoadFrom(**storage, &stats).ok());
  // Stored without records: rebuilt from the newest report.
  EXPECT_EQ(stats.from_records, 0u);
  EXPECT_EQ(stats.from_reports, 1u);
  EXPECT_EQ(stats.without_record, 1u);
  auto e = index.Get("h1");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->record.seq, 3u);
  EXPECT_EQ(e->record.labels.Find("role"), absl::string_view("db"));
  EXPECT_EQ(e->reports, 3u);
  EXPECT_EQ(e->first_seen, absl::FromUnixSeconds(1));
  EXPECT_EQ(e->last_seen, absl::FromUnixSeconds(3));
}

// The role label of `host`'s record, whose seq must be 5 (Report's, in
// these tests); "missing" for a host the index does not hold.
std::string RoleOf(const HostIndex& index, const std::string& host) {
  auto e = index.Get(host);
  EXPECT_TRUE(e.has_value()) << host;
  if (!e.has_value()) return "missing";
  EXPECT_EQ(e->record.seq, 5u) << host;
  EXPECT_EQ(e->record.threads(), 5000u) << host;  // 1000 * seq
  return std::string(e->record.labels.Find("role").value_or("none"));
}

// A row whose blob is `host`'s report with role "report" and whose record
// (unless empty) is given.
ReportRow RowWithRecord(const std::string& host, std::string record) {
  ReportRow row;
  row.host_id = host;
  row.seq = 5;
  row.received_at_ns = 5000000000;
  row.blob = Report(host, 5, "report").SerializeAsString();
  row.record = std::move(record);
  return row;
}

TEST(HostIndexTest, LoadsStoredRecordsAndRebuildsTheOthersFromReports) {
  auto storage = SqliteStorage::Open(testing::NewTempDir("idx") + "/t.db");
  ASSERT_TRUE(storage.ok());
  // The records say role "record", the reports "report": which one a host
  // was loaded from shows in its labels.
  const v1::HostReport recorded = Report("x", 5, "record");
  v1::StoredHostRecord other_format = ToStoredRecord(recorded);
  other_format.set_format_version(kHostRecordFormatVersion + 1);
  v1::StoredHostRecord other_model = ToStoredRecord(recorded);
  other_model.set_made_under_model_version("0.0.1");
  ASSERT_TRUE(
      (*storage)
          ->WriteBatch(
              {RowWithRecord("good", EncodeHostRecord(recorded)),
               RowWithRecord("none", ""),
               RowWithRecord("format", other_format.SerializeAsString()),
               RowWithRecord("model", other_model.SerializeAsString()),
               RowWithRecord("corrupt", "\x12\x64x")})
          .ok());
  HostIndex index;
  HostIndex::LoadStats stats;
  ASSERT_TRUE(index.LoadFrom(**storage, &stats).ok());
  EXPECT_EQ(index.size(), 5u);
  EXPECT_EQ(stats.from_records, 1u);
  EXPECT_EQ(stats.from_reports, 4u);
  EXPECT_EQ(stats.without_record, 1u);
  EXPECT_EQ(stats.unusable_records, 3u);
  EXPECT_EQ(stats.class_priced, 0u);
  EXPECT_FALSE(stats.first_unusable.ok());
  for (const char* host : {"good", "none", "format", "model", "corrupt"}) {
    auto e = index.Get(host);
    ASSERT_TRUE(e.has_value()) << host;
    EXPECT_EQ(e->reports, 1u) << host;
    EXPECT_EQ(e->last_seen, absl::FromUnixSeconds(5)) << host;
  }
  auto role = [&index](const std::string& host) { return RoleOf(index, host); };
  EXPECT_EQ(role("good"), "record");
  EXPECT_EQ(role("none"), "report");
  EXPECT_EQ(role("format"), "report");
  EXPECT_EQ(role("model"), "report");
  EXPECT_EQ(role("corrupt"), "report");
}

// A batch holding several reports of a host (a backlog sent 64 a message):
// the record is the highest seq's (the first of equal ones), the count and
// the times take every report, and a later batch replaces it only by a
// higher seq.
TEST(HostIndexTest, ApplyOfSeveralReportsOfAHostInOneBatch) {
  HostIndex index;
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  index.Apply({Committed(Report("a", 3, "r3"), t0 + absl::Seconds(2)),
               Committed(Report("b", 1, "b1"), t0),
               Committed(Report("a", 5, "r5"), t0 + absl::Seconds(1)),
               Committed(Report("a", 4, "r4"), t0 + absl::Seconds(7)),
               Committed(Report("a", 5, "again"), t0 + absl::Seconds(3))});
  auto a = index.Get("a");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->record.seq, 5u);
  EXPECT_EQ(a->record.labels.Find("role"), absl::string_view("r5"));
  EXPECT_EQ(a->record.threads(), 5000u);
  EXPECT_EQ(a->reports, 4u);
  EXPECT_EQ(a->first_seen, t0 + absl::Seconds(1));
  EXPECT_EQ(a->last_seen, t0 + absl::Seconds(7));
  EXPECT_EQ(index.Get("b")->reports, 1u);

  index.Apply({Committed(Report("a", 4, "late"), t0 + absl::Seconds(9)),
               Committed(Report("a", 2, "older"), t0)});
  a = index.Get("a");
  EXPECT_EQ(a->record.labels.Find("role"), absl::string_view("r5"));
  EXPECT_EQ(a->reports, 6u);
  EXPECT_EQ(a->first_seen, t0);
  EXPECT_EQ(a->last_seen, t0 + absl::Seconds(9));
  index.Apply({Committed(Report("a", 6, "r6"), t0 + absl::Seconds(10))});
  EXPECT_EQ(index.Get("a")->record.labels.Find("role"),
            absl::string_view("r6"));
}

TEST(HostIndexTest, ApplyTakesTheRecordStoredWithTheReport) {
  HostIndex index;
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  // The report says role "report", the record "record".
  auto committed = [&](const std::string& host, std::string record) {
    CommittedReport c = Committed(Report(host, 5, "report"), t0);
    c.record = std::move(record);
    return c;
  };
  v1::StoredHostRecord other_format = ToStoredRecord(Report("x", 5, "record"));
  other_format.set_format_version(kHostRecordFormatVersion + 1);
  index.Apply({committed("good", EncodeHostRecord(Report("x", 5, "record"))),
               committed("none", ""),
               committed("format", other_format.SerializeAsString()),
               committed("corrupt", "\x12\x64x")});
  auto role = [&index](const std::string& host) { return RoleOf(index, host); };
  EXPECT_EQ(role("good"), "record");
  EXPECT_EQ(role("none"), "report");
  EXPECT_EQ(role("format"), "report");
  EXPECT_EQ(role("corrupt"), "report");
}

// A host of class "CPU X / 6.16" without its own calibration: its record
// is the report's priced with the class's constants, so a stored record
// (never priced) is not taken for it.
TEST(HostIndexTest, HostPricedByItsClassIsRebuiltFromItsReport) {
  ClassCalibrations classes;
  v1::Calibration canary;
  canary.set_host_id("canary");
  canary.set_hardware_class("CPU X / 6.16");
  canary.set_c_visit_seconds(200e-9);
  classes.Add(canary);
  auto report = [](const std::string& host, const std::string& cpu,
                   const std::string& role) {
    v1::HostReport r = Report(host, 5, role);
    r.mutable_snapshot()->mutable_kernel()->set_release("6.16.3");
    r.mutable_snapshot()->mutable_cpus()->set_model_name(cpu);
    return r;
  };
  const std::string source = "1 canary of class CPU X / 6.16";
  auto check = [&](HostIndex& index, const std::string& priced_role) {
    auto priced = index.Get("priced");
    ASSERT_TRUE(priced.has_value());
    EXPECT_EQ(priced->record.labels.Find("role"),
              absl::string_view(priced_role));
    ASSERT_NE(priced->record.calibration, nullptr);
    EXPECT_EQ(priced->record.calibration->source, source);
    // Another CPU: no class constants, the stored record is taken.
    auto other = index.Get("other");
    ASSERT_TRUE(other.has_value());
    EXPECT_EQ(other->record.labels.Find("role"), absl::string_view("record"));
    EXPECT_EQ(other->record.calibration, nullptr);
  };
  // After a commit.
  {
    HostIndex index(&classes);
    CommittedReport p = Committed(report("priced", "CPU X", "report"),
                                  absl::FromUnixSeconds(5));
    p.record = EncodeHostRecord(report("priced", "CPU X", "record"));
    CommittedReport o =
        Committed(report("other", "CPU Y", "report"), absl::FromUnixSeconds(5));
    o.record = EncodeHostRecord(report("other", "CPU Y", "record"));
    index.Apply({p, o});
    check(index, "report");
  }
  // At start.
  auto storage = SqliteStorage::Open(testing::NewTempDir("idx") + "/t.db");
  ASSERT_TRUE(storage.ok());
  ReportRow p = RowWithRecord(
      "priced", EncodeHostRecord(report("priced", "CPU X", "record")));
  p.blob = report("priced", "CPU X", "report").SerializeAsString();
  ReportRow o = RowWithRecord(
      "other", EncodeHostRecord(report("other", "CPU Y", "record")));
  ASSERT_TRUE((*storage)->WriteBatch({p, o}).ok());
  {
    HostIndex index(&classes);
    HostIndex::LoadStats stats;
    ASSERT_TRUE(index.LoadFrom(**storage, &stats).ok());
    EXPECT_EQ(stats.class_priced, 1u);
    EXPECT_EQ(stats.from_records, 1u);
    EXPECT_EQ(stats.from_reports, 1u);
    check(index, "report");
  }
  // From the change feed (record and report).
  {
    HostIndex index(&classes);
    for (const ReportRow& r : {p, o}) {
      LatestRow row;
      row.host_id = r.host_id;
      row.latest_seq = r.seq;
      row.reports = 1;
      row.record = r.record;
      row.blob = r.blob;
      ASSERT_TRUE(index.Merge(row).ok());
    }
    check(index, "report");
  }
}

TEST(HostIndexTest, UnparsableBlobIsReportedAndSkipped) {
  auto storage = SqliteStorage::Open(testing::NewTempDir("idx") + "/t.db");
  ASSERT_TRUE(storage.ok());
  ReportRow bad;
  bad.host_id = "bad";
  bad.seq = 1;
  bad.blob = "\xff\xff\xff";
  ReportRow good;
  good.host_id = "good";
  good.seq = 1;
  good.blob = Report("good", 1, "db").SerializeAsString();
  ASSERT_TRUE((*storage)->WriteBatch({bad, good}).ok());
  HostIndex index;
  EXPECT_TRUE(absl::IsDataLoss(index.LoadFrom(**storage)));
  EXPECT_TRUE(index.Get("good").has_value());
  EXPECT_FALSE(index.Get("bad").has_value());
}

}  // namespace
}  // namespace tracehealth::server

namespace tracehealth::server {
namespace {

std::string Blob(const std::string& host, uint64_t seq) {
  v1::HostReport r;
  r.set_host_id(host);
  r.set_seq(seq);
  return r.SerializeAsString();
}

LatestRow Row(const std::string& host, uint64_t seq, int64_t first,
              int64_t last, uint64_t reports) {
  LatestRow row;
  row.host_id = host;
  row.latest_seq = seq;
  row.first_seen_ns = first;
  row.last_seen_ns = last;
  row.reports = reports;
  row.blob = Blob(host, seq);
  return row;
}

TEST(HostIndexMergeTest, TakesNewerStateAndIgnoresOlderOrRepeated) {
  HostIndex index;
  LatestRow r = Row("h", 5, 100, 500, 5);
  ASSERT_TRUE(index.Merge(r).ok());
  std::optional<HostEntry> e = index.Get("h");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->record.seq, 5u);
  EXPECT_EQ(e->reports, 5u);
  EXPECT_EQ(absl::ToUnixNanos(e->first_seen), 100);
  EXPECT_EQ(absl::ToUnixNanos(e->last_seen), 500);
  // An older delivery (seq 4, fewer reports, earlier times) changes nothing
  // but the first-seen time, which only moves outwards.
  r = Row("h", 4, 50, 400, 4);
  ASSERT_TRUE(index.Merge(r).ok());
  e = index.Get("h");
  EXPECT_EQ(e->record.seq, 5u);
  EXPECT_EQ(e->reports, 5u);
  EXPECT_EQ(absl::ToUnixNanos(e->first_seen), 50);
  EXPECT_EQ(absl::ToUnixNanos(e->last_seen), 500);
  // A newer one replaces the report and raises the count and last seen.
  r = Row("h", 7, 100, 700, 7);
  ASSERT_TRUE(index.Merge(r).ok());
  e = index.Get("h");
  EXPECT_EQ(e->record.seq, 7u);
  EXPECT_EQ(e->reports, 7u);
  EXPECT_EQ(absl::ToUnixNanos(e->last_seen), 700);
  EXPECT_EQ(index.LatestSeq("h"), 7u);
}

TEST(HostIndexMergeTest, UndecodableBlobIsDataLossAndSkipped) {
  HostIndex index;
  LatestRow r = Row("h", 1, 1, 1, 1);
  r.blob = std::string("\xff\xff\xff", 3);
  EXPECT_TRUE(absl::IsDataLoss(index.Merge(r)));
  EXPECT_FALSE(index.Get("h").has_value());
}

}  // namespace
}  // namespace tracehealth::server
