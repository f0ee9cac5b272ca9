#include "server/ingest/report_row.h"

#include "gtest/gtest.h"
#include "proto/tracehealth/v1/report.pb.h"
#include "server/index/host_record_codec.h"

namespace tracehealth::server {
namespace {

TEST(ReportRowTest, ExtractsKeyColumns) {
  v1::HostReport r;
  r.set_host_id("h");
  r.set_seq(9);
  r.mutable_observed_at()->set_seconds(100);
  r.mutable_observed_at()->set_nanos(5);
  r.mutable_predictions()->set_worst_risk(v1::RISK_STALL);
  auto* a = r.mutable_predictions()->add_attach();
  a->set_probe_kind(v1::PROBE_KIND_FUNCTION_GRAPH_TRACER);
  a->set_latency_seconds(1);
  a = r.mutable_predictions()->add_attach();
  a->set_probe_kind(v1::PROBE_KIND_KPROBE_MULTI_RETURN);
  a->set_latency_seconds(7.5);
  r.mutable_predictions()->mutable_stack_depot()->set_budget_ratio(0.25);
  const std::string wire = r.SerializeAsString();
  absl::StatusOr<ReportHead> head = DecodeReportHead(wire);
  ASSERT_TRUE(head.ok()) << head.status();
  ReportRow row = MakeReportRow(*head, wire, absl::FromUnixSeconds(200));
  EXPECT_EQ(row.host_id, "h");
  EXPECT_EQ(row.seq, 9u);
  EXPECT_EQ(row.observed_at_ns, 100000000005LL);
  EXPECT_EQ(row.received_at_ns, 200000000000LL);
  EXPECT_EQ(row.worst_risk, v1::RISK_STALL);
  EXPECT_DOUBLE_EQ(*row.attach_latency_seconds, 7.5);
  EXPECT_DOUBLE_EQ(*row.pool_budget_ratio, 0.25);
  EXPECT_FALSE(row.purge_seconds.has_value());
  EXPECT_EQ(row.blob, wire);
  // The report's stored record, with its seq and attach numbers.
  v1::StoredHostRecord rec;
  ASSERT_TRUE(rec.ParseFromString(row.record));
  EXPECT_EQ(rec.SerializeAsString(), ToStoredRecord(r).SerializeAsString());
  EXPECT_EQ(rec.seq(), 9u);
  ASSERT_EQ(rec.attach_size(), 2);
  EXPECT_EQ(rec.attach(1).probe_kind(), v1::PROBE_KIND_KPROBE_MULTI_RETURN);
  EXPECT_EQ(rec.attach(1).latency_seconds(), 7.5);
  EXPECT_EQ(rec.pool_budget_ratio(), 0.25);
}

TEST(ReportRowTest, HandsOnTheParse) {
  v1::HostReport r;
  r.set_host_id("h");
  r.set_seq(9);
  r.mutable_health()->set_spool_dropped_total(4);
  const std::string wire = r.SerializeAsString();
  absl::StatusOr<ReportHead> head = DecodeReportHead(wire);
  ASSERT_TRUE(head.ok()) << head.status();
  std::shared_ptr<const v1::HostReport> parsed;
  ReportRow row = MakeReportRow(*head, wire, absl::Now(), &parsed);
  ASSERT_NE(parsed, nullptr);
  EXPECT_EQ(parsed->SerializeAsString(), wire);
  // The record is made only when the store keeps the row whole.
  EXPECT_TRUE(row.record.empty());
  std::string blob, record;
  WholeParts parts = WholeOf(row, &blob, &record);
  EXPECT_EQ(*parts.blob, wire);
  EXPECT_EQ(*parts.record, EncodeHostRecord(r));
  // Bytes that do not parse (a truncated field after the head): a stand-in
  // report, no record.
  const std::string bad = wire + std::string("\x62\x64", 2);
  row = MakeReportRow(*head, bad, absl::Now(), &parsed);
  ASSERT_NE(parsed, nullptr);
  EXPECT_EQ(parsed->host_id(), "h");
  EXPECT_EQ(parsed->seq(), 9u);
  EXPECT_FALSE(parsed->has_health());
  EXPECT_TRUE(row.record.empty());
  EXPECT_FALSE(row.whole);
}

TEST(ReportRowTest, BlobThatDoesNotParseGetsNoRecord) {
  v1::HostReport r;
  r.set_host_id("h");
  r.set_seq(9);
  std::string wire = r.SerializeAsString();
  absl::StatusOr<ReportHead> head = DecodeReportHead(wire);
  ASSERT_TRUE(head.ok()) << head.status();
  // A truncated field after the head: 0x62 = field 12, length-delimited,
  // claiming 100 bytes.
  wire += std::string("\x62\x64", 2);
  ReportRow row = MakeReportRow(*head, wire, absl::FromUnixSeconds(200));
  EXPECT_TRUE(row.record.empty());
  EXPECT_EQ(row.blob, wire);
}

TEST(ReportRowTest, PurgeColumnOnlyWhenTheModelApplies) {
  v1::HostReport r;
  r.set_host_id("h");
  r.mutable_predictions()->mutable_vmap_purge()->set_purge_seconds(3);
  std::string wire = r.SerializeAsString();
  EXPECT_FALSE(
      MakeReportRow(*DecodeReportHead(wire), wire, absl::Now()).purge_seconds);
  r.mutable_predictions()->mutable_vmap_purge()->set_applies(true);
  wire = r.SerializeAsString();
  EXPECT_EQ(
      MakeReportRow(*DecodeReportHead(wire), wire, absl::Now()).purge_seconds,
      3.0);
}

}  // namespace
}  // namespace tracehealth::server
