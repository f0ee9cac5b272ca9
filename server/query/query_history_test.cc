// QueryService's HostHistory (query_history.cc) on the stored reports.
#include <string>

#include "google/protobuf/util/time_util.h"
#include "gtest/gtest.h"
#include "server/query/query_service.h"
#include "server/query/query_service_test_fixture.h"
#include "tools/loadgen/sample_report.h"

namespace tracehealth::server {
namespace {

TEST_F(QueryServiceTest, HostHistoryGivesTheStoredReportsOfTheWindow) {
  // h1's seqs 1..5 observed 50, 40, 30, 20 and 10 s ago, 1000 more threads
  // each.
  std::vector<ReportRow> rows;
  std::vector<v1::HostReport> reports;
  for (int seq = 1; seq <= 5; ++seq) {
    SampleHost h;
    h.host_id = "h1";
    h.threads = 100000 + 1000 * seq;
    const absl::Time observed = now_ - absl::Seconds(60 - 10 * seq);
    reports.push_back(SampleReport(h, seq, observed));
    ReportRow r;
    r.host_id = "h1";
    r.seq = seq;
    r.observed_at_ns = absl::ToUnixNanos(observed);
    r.received_at_ns = r.observed_at_ns;
    r.worst_risk = reports.back().predictions().worst_risk();
    r.purge_seconds = 2.5 * seq;
    r.blob = reports.back().SerializeAsString();
    rows.push_back(r);
  }
  ASSERT_TRUE(storage_->WriteBatch(rows).ok());

  v1::GetHostHistoryRequest req;
  req.set_host_id("h1");
  req.set_probe_kind(v1::PROBE_KIND_FUNCTION_GRAPH_TRACER);
  *req.mutable_from() = google::protobuf::util::TimeUtil::SecondsToTimestamp(
      absl::ToUnixSeconds(now_) - 45);
  v1::GetHostHistoryResponse resp;
  grpc::Status st = service_->DoGetHostHistory(req, &resp);
  ASSERT_TRUE(st.ok()) << st.error_message();
  // From 45 s ago to now: seqs 2..5.
  EXPECT_EQ(resp.matched_reports(), 4u);
  ASSERT_EQ(resp.points_size(), 4);
  for (int i = 0; i < 4; ++i) {
    const v1::HistoryPoint& p = resp.points(i);
    const v1::HostReport& r = reports[i + 1];
    EXPECT_EQ(p.seq(), static_cast<uint64_t>(i + 2));
    EXPECT_EQ(p.threads(), 100000u + 1000u * (i + 2));
    EXPECT_EQ(p.purge_seconds(), 2.5 * (i + 2));
    EXPECT_EQ(p.observed_at().seconds(),
              absl::ToUnixSeconds(now_) - 40 + 10 * i);
    // The stored function_graph prediction (attach[0]: ProbeKind order).
    ASSERT_EQ(r.predictions().attach(0).probe_kind(),
              v1::PROBE_KIND_FUNCTION_GRAPH_TRACER);
    EXPECT_EQ(p.attach_latency_seconds(),
              r.predictions().attach(0).latency_seconds());
  }
  // Two points of four: every second one, from the oldest.
  req.set_max_points(2);
  resp.Clear();
  ASSERT_TRUE(service_->DoGetHostHistory(req, &resp).ok());
  ASSERT_EQ(resp.points_size(), 2);
  EXPECT_EQ(resp.points(0).seq(), 2u);
  EXPECT_EQ(resp.points(1).seq(), 4u);

  struct Bad {
    std::string host;
    int64_t from_s;
    grpc::StatusCode code;
    std::string message;
  } bad[] = {
      {"", -45, grpc::StatusCode::INVALID_ARGUMENT, "host_id is required"},
      {"nope", -45, grpc::StatusCode::NOT_FOUND, "unknown host \"nope\""},
      {"h1", +45, grpc::StatusCode::INVALID_ARGUMENT, "from is after to"},
  };
  for (const Bad& b : bad) {
    v1::GetHostHistoryRequest r;
    r.set_host_id(b.host);
    *r.mutable_from() = google::protobuf::util::TimeUtil::SecondsToTimestamp(
        absl::ToUnixSeconds(now_) + b.from_s);
    v1::GetHostHistoryResponse out;
    grpc::Status got = service_->DoGetHostHistory(r, &out);
    EXPECT_EQ(got.error_code(), b.code) << b.message;
    EXPECT_EQ(got.error_message(), b.message);
  }
}

}  // namespace
}  // namespace tracehealth::server
