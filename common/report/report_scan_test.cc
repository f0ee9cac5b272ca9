#include "common/report/report_scan.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "proto/tracehealth/v1/report.pb.h"
#include "tools/loadgen/sample_report.h"

namespace tracehealth {
namespace {

v1::HostReport Sample(int i) {
  return server::SampleReport(server::FleetHost(i), 7 + i,
                              absl::FromUnixSeconds(1800000000 + i));
}

// Reports of several shapes (a heartbeat form, a base, a feature-table
// override, the purge model applying) and, from each, bytes cut, changed
// and inserted at random places: about a third decode, some with values
// the check refuses.
std::vector<std::string> Inputs() {
  std::vector<std::string> bases;
  for (int i = 0; i < 5; ++i) {
    v1::HostReport r = Sample(i);
    if (i == 1) r.mutable_heartbeat()->set_base_seq(3);
    if (i == 2) r.mutable_heartbeat();
    if (i == 3) {
      r.mutable_feature_table_override()->set_digest("sha256:00");
      v1::FeatureRow* row = r.mutable_feature_table_override()->add_rows();
      row->set_name("kasan_flush_combined");
      row->set_since("6.13");
    }
    if (i == 4)
      r.mutable_predictions()->mutable_vmap_purge()->set_applies(true);
    bases.push_back(r.SerializeAsString());
  }
  std::vector<std::string> out = bases;
  std::mt19937_64 rng(12345);
  for (const std::string& b : bases) {
    for (int k = 0; k < 300; ++k) {
      std::string w = b;
      const size_t pos = rng() % w.size();
      switch (rng() % 4) {
        case 0:
          w.resize(pos);
          break;
        case 1:
          w[pos] = static_cast<char>(rng() & 0xff);
          break;
        case 2:
          w[pos] = static_cast<char>(w[pos] ^ (1 << (rng() % 8)));
          break;
        default:
          w.insert(pos, 1, static_cast<char>(rng() & 0xff));
      }
      out.push_back(std::move(w));
    }
  }
  return out;
}

void ExpectSameHead(const ReportHead& a, const ReportHead& b) {
  EXPECT_EQ(a.host_id, b.host_id);
  EXPECT_EQ(a.agent_version, b.agent_version);
  EXPECT_EQ(a.model_version, b.model_version);
  EXPECT_EQ(a.labels, b.labels);
  EXPECT_EQ(a.seq, b.seq);
  EXPECT_EQ(a.has_observed_at, b.has_observed_at);
  EXPECT_EQ(a.observed_at_seconds, b.observed_at_seconds);
  EXPECT_EQ(a.observed_at_nanos, b.observed_at_nanos);
  EXPECT_EQ(a.interval_seconds, b.interval_seconds);
  EXPECT_EQ(a.worst_risk, b.worst_risk);
  EXPECT_EQ(a.attach_kinds, b.attach_kinds);
  EXPECT_EQ(a.attach_latency_seconds, b.attach_latency_seconds);
  EXPECT_EQ(a.pool_budget_ratio, b.pool_budget_ratio);
  EXPECT_EQ(a.purge_seconds, b.purge_seconds);
  EXPECT_EQ(a.has_heartbeat, b.has_heartbeat);
  EXPECT_EQ(a.heartbeat_base_seq, b.heartbeat_base_seq);
  EXPECT_EQ(a.feature_table_override, b.feature_table_override);
}

// The one pass answers each question exactly as the walk answering it
// alone: the check's status and reason, the head (or the head's own reason
// when the bytes do not decode), the material content of what passes.
TEST(ReportScanTest, AnswersAsEachQuestionAlone) {
  const WireLimits limits;
  int ok = 0, data_loss = 0, invalid = 0;
  for (const std::string& w : Inputs()) {
    const ReportScan scan = ScanReport(w, limits);
    const absl::Status check = CheckReportWire(w, limits);
    ASSERT_EQ(scan.check, check);
    ok += check.ok();
    data_loss += absl::IsDataLoss(check);
    invalid += absl::IsInvalidArgument(check);
    const absl::StatusOr<ReportHead> head = DecodeReportHead(w);
    ASSERT_EQ(scan.head_status, head.status());
    if (head.ok()) ExpectSameHead(scan.head, *head);
    const Material m = MaterialOfWire(w);
    if (check.ok()) {
      EXPECT_EQ(scan.material.digest, m.digest);
      EXPECT_EQ(scan.material.numbers, m.numbers);
    } else {
      EXPECT_EQ(scan.material.digest, 0u);
      EXPECT_TRUE(scan.material.numbers.empty());
    }
  }
  // Each kind of answer was exercised.
  EXPECT_GT(ok, 300);
  EXPECT_GT(data_loss, 300);
  EXPECT_GT(invalid, 10);
}

TEST(ReportScanTest, ScanOfARealReport) {
  v1::HostReport r = Sample(0);
  r.mutable_heartbeat()->set_base_seq(5);
  const std::string w = r.SerializeAsString();
  const ReportScan scan = ScanReport(w, WireLimits{});
  ASSERT_TRUE(scan.check.ok()) << scan.check;
  ASSERT_TRUE(scan.head_status.ok()) << scan.head_status;
  EXPECT_EQ(scan.head.host_id, r.host_id());
  EXPECT_EQ(scan.head.seq, r.seq());
  EXPECT_EQ(scan.head.observed_at_seconds, r.observed_at().seconds());
  EXPECT_EQ(scan.head.labels.size(), r.labels().size());
  EXPECT_EQ(scan.head.heartbeat_base_seq, 5u);
  EXPECT_EQ(scan.head.attach_kinds.size(),
            static_cast<size_t>(r.predictions().attach_size()));
  EXPECT_NE(scan.material.digest, 0u);
  EXPECT_EQ(scan.material.digest, MaterialOf(r).digest);
}

// The digest's value is pinned: stores compare it with the digests of
// reports received before, so a new walk must mix exactly as the old one.
// The sample carries the models' predictions, so a change of the models'
// answers moves it too (last: the patching stretches of the kinds without
// a walk); a change of the walk alone must not.
TEST(ReportScanTest, DigestValueIsPinned) {
  const std::string w = Sample(0).SerializeAsString();
  EXPECT_EQ(MaterialOfWire(w).digest, 0x79bb580625cb30b7ULL);
  EXPECT_EQ(ScanReport(w, WireLimits{}).material.digest, 0x79bb580625cb30b7ULL);
}

// A singular number sent packed is an unknown field to protobuf, which the
// check passes; its numbers do not decode, so the material content is
// unknown, in the one pass as alone.
TEST(ReportScanTest, SingularNumberSentPackedLeavesMaterialUnknown) {
  // predictions (9) { vmap_purge (3) { purge_seconds (8), wire type 2: 3
  // bytes } }, merged into the report's predictions.
  const std::string vmap = std::string(
      "\x42\x03"
      "abc",
      5);
  const std::string predictions = std::string("\x1a\x05", 2) + vmap;
  const std::string w =
      Sample(0).SerializeAsString() + std::string("\x4a\x07", 2) + predictions;
  v1::HostReport parsed;
  ASSERT_TRUE(parsed.ParseFromString(w));
  const ReportScan scan = ScanReport(w, WireLimits{});
  EXPECT_TRUE(scan.check.ok()) << scan.check;
  EXPECT_TRUE(scan.head_status.ok()) << scan.head_status;
  EXPECT_EQ(scan.material.digest, 0u);
  EXPECT_EQ(MaterialOfWire(w).digest, 0u);
}

// Bytes that do not decode in a field the head passes over (inside the
// snapshot): the check says DataLoss, the head is still read.
TEST(ReportScanTest, UndecodableOutsideTheHeadKeepsTheHead) {
  v1::HostReport r = Sample(0);
  r.mutable_snapshot()->mutable_kernel()->set_release("6.1\xff");
  const std::string w = r.SerializeAsString();
  const ReportScan scan = ScanReport(w, WireLimits{});
  EXPECT_TRUE(absl::IsDataLoss(scan.check)) << scan.check;
  ASSERT_TRUE(scan.head_status.ok()) << scan.head_status;
  EXPECT_EQ(scan.head.host_id, r.host_id());
  EXPECT_EQ(scan.head.seq, r.seq());
  EXPECT_EQ(scan.material.digest, 0u);
}

}  // namespace
}  // namespace tracehealth
