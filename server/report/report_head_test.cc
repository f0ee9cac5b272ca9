#include "server/report/report_head.h"

#include <map>
#include <string>

#include "gtest/gtest.h"
#include "proto/tracehealth/v1/report.pb.h"
#include "tools/loadgen/sample_report.h"

namespace tracehealth::server {
namespace {

// The head must say what protobuf's parse of the same bytes says.
void ExpectMatchesParse(const std::string& wire) {
  v1::HostReport r;
  ASSERT_TRUE(r.ParseFromString(wire));
  absl::StatusOr<ReportHead> head = DecodeReportHead(wire);
  ASSERT_TRUE(head.ok()) << head.status();
  EXPECT_EQ(head->host_id, r.host_id());
  EXPECT_EQ(head->seq, r.seq());
  EXPECT_EQ(head->has_observed_at, r.has_observed_at());
  EXPECT_EQ(head->observed_at_seconds, r.observed_at().seconds());
  EXPECT_EQ(head->observed_at_nanos, r.observed_at().nanos());
  EXPECT_EQ(head->agent_version, r.agent_version());
  EXPECT_EQ(head->model_version, r.model_version());
  std::map<std::string, std::string> labels;
  for (const auto& [k, v] : head->labels)
    labels[std::string(k)] = std::string(v);
  EXPECT_EQ(labels, (std::map<std::string, std::string>(r.labels().begin(),
                                                        r.labels().end())));
  EXPECT_EQ(head->worst_risk, r.predictions().worst_risk());
  std::optional<double> attach;
  for (const v1::AttachPrediction& a : r.predictions().attach()) {
    if (a.probe_kind() == v1::PROBE_KIND_KPROBE_MULTI_RETURN)
      attach = a.latency_seconds();
  }
  EXPECT_EQ(head->attach_latency_seconds, attach);
  std::optional<double> ratio;
  if (r.predictions().stack_depot().has_budget_ratio()) {
    ratio = r.predictions().stack_depot().budget_ratio();
  }
  EXPECT_EQ(head->pool_budget_ratio, ratio);
  std::optional<double> purge;
  if (r.predictions().vmap_purge().applies())
    purge = r.predictions().vmap_purge().purge_seconds();
  EXPECT_EQ(head->purge_seconds, purge);
  // The override's occurrences, merged as protobuf merges them.
  v1::FeatureTableOverride merged;
  for (absl::string_view bytes : head->feature_table_override) {
    ASSERT_TRUE(merged.MergeFromString(std::string(bytes)));
  }
  EXPECT_EQ(merged.SerializeAsString(),
            r.feature_table_override().SerializeAsString());
  EXPECT_EQ(head->feature_table_override.empty(),
            !r.has_feature_table_override());
  EXPECT_EQ(head->has_heartbeat, r.has_heartbeat());
  EXPECT_EQ(head->heartbeat_base_seq, r.heartbeat().base_seq());
  std::optional<uint64_t> threads;
  if (r.snapshot().threads().has_total())
    threads = r.snapshot().threads().total();
  EXPECT_EQ(head->threads_total, threads);
}

v1::FeatureTableOverride Override(const std::string& digest,
                                  const std::string& row) {
  v1::FeatureTableOverride o;
  o.set_digest(digest);
  o.add_rows()->set_name(row);
  o.mutable_rows(0)->set_since("6.13");
  return o;
}

TEST(ReportHeadTest, MatchesTheParsedReport) {
  for (int i = 0; i < 16; ++i) {
    v1::HostReport r =
        SampleReport(FleetHost(i), 100 + i, absl::FromUnixSeconds(1800000000));
    r.mutable_observed_at()->set_nanos(12345);
    if (i % 2 == 0)
      r.mutable_predictions()->mutable_stack_depot()->set_budget_ratio(0.5 + i);
    if (i % 3 == 0) {
      r.mutable_predictions()->mutable_vmap_purge()->set_applies(true);
      r.mutable_predictions()->mutable_vmap_purge()->set_purge_seconds(i * 1.5);
    }
    if (i % 4 == 0)
      *r.mutable_feature_table_override() = Override("sha256:ab", "row");
    // Sent whole as a base (base_seq 0), in heartbeat form, or unmarked.
    if (i % 5 == 1) r.mutable_heartbeat();
    if (i % 5 == 2) r.mutable_heartbeat()->set_base_seq(90 + i);
    // Threads: a count, none (the field absent), or a count of 0 (present).
    if (i % 7 == 3) r.mutable_snapshot()->mutable_threads()->clear_total();
    if (i % 7 == 4) r.mutable_snapshot()->mutable_threads()->set_total(0);
    SCOPED_TRACE(i);
    ExpectMatchesParse(r.SerializeAsString());
    // The sample reports carry a kprobe_multi_return prediction.
    EXPECT_TRUE(DecodeReportHead(r.SerializeAsString())
                    ->attach_latency_seconds.has_value());
  }
}

// Concatenated messages merge: the last scalar wins, sub-messages merge,
// repeated fields and map entries accumulate (a later key wins).
TEST(ReportHeadTest, FollowsProtobufMergeRules) {
  v1::HostReport a =
      SampleReport(FleetHost(1), 5, absl::FromUnixSeconds(1800000000));
  a.mutable_predictions()->mutable_vmap_purge()->set_applies(true);
  a.mutable_predictions()->mutable_vmap_purge()->set_purge_seconds(2);
  v1::HostReport b;
  b.set_host_id("other");
  b.set_seq(9);
  b.mutable_observed_at()->set_nanos(7);
  (*b.mutable_labels())["role"] = "replaced";
  (*b.mutable_labels())["extra"] = "x";
  b.mutable_predictions()->mutable_vmap_purge()->set_purge_seconds(5);
  b.mutable_predictions()->mutable_stack_depot()->set_budget_ratio(0.75);
  b.mutable_snapshot()->mutable_threads()->set_total(777);
  auto* k = b.mutable_predictions()->add_attach();
  k->set_probe_kind(v1::PROBE_KIND_KPROBE_MULTI_RETURN);
  k->set_latency_seconds(42);
  *a.mutable_feature_table_override() =
      Override("sha256:aa", "kasan_flush_combined");
  *b.mutable_feature_table_override() =
      Override("sha256:bb", "invlpgb_kernel_flush");
  ExpectMatchesParse(a.SerializeAsString() + b.SerializeAsString());
  ExpectMatchesParse(b.SerializeAsString() + a.SerializeAsString());
  // The later snapshot's total wins; one without a total keeps the earlier.
  EXPECT_EQ(DecodeReportHead(a.SerializeAsString() + b.SerializeAsString())
                ->threads_total,
            777u);
  v1::HostReport c;
  c.mutable_snapshot()->mutable_threads()->set_running(3);
  EXPECT_EQ(DecodeReportHead(b.SerializeAsString() + c.SerializeAsString())
                ->threads_total,
            777u);
  EXPECT_EQ(DecodeReportHead(c.SerializeAsString())->threads_total,
            std::nullopt);
}

// A known field number with an unexpected wire type is an unknown field.
TEST(ReportHeadTest, SkipsFieldsWithAnotherWireType) {
  v1::HostReport r =
      SampleReport(FleetHost(2), 5, absl::FromUnixSeconds(1800000000));
  std::string wire = r.SerializeAsString();
  wire += std::string("\x12\x01x", 3);  // field 2 (seq) as length-delimited
  wire += std::string("\x09", 1) +
          std::string(8, '\0');  // field 1 (host_id) as fixed64
  ExpectMatchesParse(wire);
  EXPECT_EQ(DecodeReportHead(wire)->seq, 5u);
}

TEST(ReportHeadTest, TruncatedHeadIsDataLoss) {
  const std::string wire =
      SampleReport(FleetHost(2), 5, absl::FromUnixSeconds(1800000000))
          .SerializeAsString();
  EXPECT_TRUE(absl::IsDataLoss(DecodeReportHead(wire.substr(0, 5)).status()));
  EXPECT_TRUE(absl::IsDataLoss(DecodeReportHead(wire + "\x0b").status()));
}

}  // namespace
}  // namespace tracehealth::server
