#include "server/query/query_service.h"

#include "common/models/evaluate.h"
#include "gtest/gtest.h"
#include "server/storage/sqlite/sqlite_storage.h"
#include "tests/util/sample_report.h"
#include "tests/util/subprocess.h"

namespace tracehealth::server {
namespace {

class QueryServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = SqliteStorage::Open(testing::NewTempDir("query") + "/q.db");
    ASSERT_TRUE(s.ok());
    storage_ = std::move(*s);
    now_ = absl::FromUnixSeconds(1800000000);
    std::vector<CommittedReport> reports;
    for (int i = 0; i < 6; ++i) {
      SampleHost h;
      h.host_id = "h" + std::to_string(i);
      h.threads = 10000 + 60000 * i;  // h5 is the worst
      h.role = i % 2 == 0 ? "db" : "web";
      reports.push_back(
          {StoredReport::Of(SampleReport(h, 1, now_ - absl::Seconds(10))),
           i == 0 ? now_ - absl::Hours(1) : now_});
    }
    index_.Apply(reports);
    QueryOptions opts;
    opts.now = [this] { return now_; };
    service_ =
        std::make_unique<QueryService>(&index_, storage_.get(), nullptr, opts);
  }

  absl::Time now_;
  std::unique_ptr<SqliteStorage> storage_;
  HostIndex index_;
  std::unique_ptr<QueryService> service_;
};

TEST_F(QueryServiceTest, PredictAttachRanksWorstFirstAndLimits) {
  v1::PredictAttachRequest req;
  req.set_probe_kind(v1::PROBE_KIND_FUNCTION_GRAPH_TRACER);
  req.set_limit(3);
  v1::PredictAttachResponse resp;
  ASSERT_TRUE(service_->DoPredictAttach(req, &resp).ok());
  EXPECT_EQ(resp.matched_hosts(), 6u);
  ASSERT_EQ(resp.answers_size(), 3);
  EXPECT_EQ(resp.answers(0).host_id(), "h5");
  EXPECT_EQ(resp.answers(1).host_id(), "h4");
  EXPECT_EQ(resp.answers(2).host_id(), "h3");
  EXPECT_GE(resp.answers(0).prediction().latency_seconds(),
            resp.answers(1).prediction().latency_seconds());
  EXPECT_EQ(resp.answers(0).data_age().seconds(), 10);
  EXPECT_FALSE(resp.answers(0).recommendation().empty());
  // Stored without summary and basis (the wire form); answered with them.
  const v1::HostReport& stored = *index_.Get("h5")->latest;
  EXPECT_TRUE(stored.predictions().attach(0).summary().empty());
  const v1::AttachPrediction& p = resp.answers(0).prediction();
  EXPECT_EQ(
      p.SerializeAsString(),
      EvaluateAttach(stored.snapshot(), v1::PROBE_KIND_FUNCTION_GRAPH_TRACER)
          .SerializeAsString());
  EXPECT_FALSE(p.summary().empty());
  EXPECT_GT(p.basis().inputs_size(), 0);
}

TEST_F(QueryServiceTest, GetHostExplainsTheStoredPredictions) {
  v1::GetHostRequest req;
  req.set_host_id("h3");
  v1::HostState resp;
  ASSERT_TRUE(service_->DoGetHost(req, &resp).ok());
  EXPECT_EQ(resp.latest().predictions().SerializeAsString(),
            EvaluateAll(resp.latest().snapshot()).SerializeAsString());
  EXPECT_TRUE(
      index_.Get("h3")->latest->predictions().vmap_purge().summary().empty());
}

TEST_F(QueryServiceTest, WhatIfRecomputesEveryHost) {
  v1::PredictAttachRequest req;
  req.mutable_hosts()->set_labels("role=db");
  req.set_probe_kind(v1::PROBE_KIND_FUNCTION_GRAPH_TRACER);
  req.mutable_what_if()->set_threads(300000);
  v1::PredictAttachResponse resp;
  ASSERT_TRUE(service_->DoPredictAttach(req, &resp).ok());
  ASSERT_EQ(resp.answers_size(), 3);  // h0, h2, h4
  for (const auto& a : resp.answers()) {
    EXPECT_EQ(a.prediction().threads_total(), 300000u) << a.host_id();
  }
  // Same threads, same kernel, same risk: ordered by host id.
  EXPECT_EQ(resp.answers(0).host_id(), "h0");
}

TEST_F(QueryServiceTest, StaleUnknownAndSummary) {
  v1::PredictAttachRequest req;
  req.mutable_hosts()->add_host_ids("h0");
  req.mutable_hosts()->add_host_ids("missing");
  v1::PredictAttachResponse resp;
  ASSERT_TRUE(service_->DoPredictAttach(req, &resp).ok());
  ASSERT_EQ(resp.answers_size(), 1);
  EXPECT_TRUE(resp.answers(0).stale());  // 1 h > 3 x 30 s
  ASSERT_EQ(resp.unknown_hosts_size(), 1);

  v1::FleetSummaryResponse fs;
  ASSERT_TRUE(service_->DoFleetSummary({}, &fs).ok());
  EXPECT_EQ(fs.hosts(), 6u);
  EXPECT_EQ(fs.stale_hosts(), 1u);

  v1::ListHostsRequest lh;
  lh.set_min_risk(v1::RISK_STALL);
  v1::ListHostsResponse lr;
  ASSERT_TRUE(service_->DoListHosts(lh, &lr).ok());
  for (const auto& h : lr.hosts()) EXPECT_EQ(h.worst_risk(), v1::RISK_STALL);

  v1::GetHostRequest gh;
  gh.set_host_id("nope");
  v1::HostState hs;
  EXPECT_EQ(service_->DoGetHost(gh, &hs).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

TEST_F(QueryServiceTest, EmptyHostIdIsInvalid) {
  v1::GetHostRequest req;
  v1::HostState resp;
  grpc::Status st = service_->DoGetHost(req, &resp);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(st.error_message(), "host_id: required");
}

// Input echoed in an error is cut to 128 bytes plus its length, so that a
// 20 kB host id does not turn into an error too big for gRPC's metadata.
TEST_F(QueryServiceTest, ErrorsEchoAtMost128BytesOfInput) {
  const std::string big(20000, 'h');
  const std::string echoed = std::string(128, 'h') + "…(20000 bytes)";
  v1::GetHostRequest gh;
  gh.set_host_id(big);
  v1::HostState hs;
  grpc::Status st = service_->DoGetHost(gh, &hs);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(st.error_message(), "unknown host \"" + echoed + "\"");
  // Escaped too: the message is printed by clients.
  gh.set_host_id("no\x1b[2Jpe");
  EXPECT_EQ(service_->DoGetHost(gh, &hs).error_message(),
            "unknown host \"no\\x1b[2Jpe\"");

  v1::PredictAttachRequest pa;
  pa.mutable_what_if()->set_kernel_release(big);
  v1::PredictAttachResponse pr;
  st = service_->DoPredictAttach(pa, &pr);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(st.error_message(),
            "what_if.kernel_release: cannot parse \"" + echoed + "\"");

  v1::ListHostsRequest lh;
  lh.mutable_hosts()->set_labels(big);
  v1::ListHostsResponse lr;
  st = service_->DoListHosts(lh, &lr);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(st.error_message(),
            "selector: no operator (=, !=, =~, !~) in \"" + echoed + "\"");

  pa.Clear();
  pa.set_probe_kind(static_cast<v1::ProbeKind>(999));
  st = service_->DoPredictAttach(pa, &pr);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(st.error_message(), "probe_kind: unknown value 999");
}

}  // namespace
}  // namespace tracehealth::server
