#include "server/query/query_service.h"

#include <map>

#include "common/models/evaluate.h"
#include "google/protobuf/util/time_util.h"
#include "gtest/gtest.h"
#include "server/query/query_service_test_fixture.h"
#include "server/storage/sqlite/sqlite_storage.h"
#include "tools/loadgen/sample_report.h"

namespace tracehealth::server {
namespace {

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
  const v1::HostReport& stored = reports_.at("h5");
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
  EXPECT_TRUE(reports_.at("h3").predictions().vmap_purge().summary().empty());
  EXPECT_EQ(resp.latest().snapshot().SerializeAsString(),
            reports_.at("h3").snapshot().SerializeAsString());
  EXPECT_EQ(resp.labels().at("role"), "web");
}

// Whose constants price the shown report, typed: the seed default without a
// calibration, the host's own, or its class's (stood in by the server).
TEST_F(QueryServiceTest, GetHostNamesWhoseConstantsPriceThePredictions) {
  // A report of `host` (seq 2) with a calibration of c_visit `c_visit`,
  // stored and applied as the server does.
  auto store = [&](const std::string& host, double c_visit,
                   v1::ConstantsOrigin origin, uint32_t canaries) {
    SampleHost h;
    h.host_id = host;
    v1::HostReport r = SampleReport(h, 2, now_ - absl::Seconds(5));
    v1::Calibration* c = r.mutable_calibration();
    c->set_c_visit_seconds(c_visit);
    c->set_origin(origin);
    c->set_class_canaries(canaries);
    ReportRow row;
    row.host_id = host;
    row.seq = 2;
    row.received_at_ns = absl::ToUnixNanos(now_);
    row.blob = r.SerializeAsString();
    ASSERT_TRUE(storage_->WriteBatch({row}).ok());
    index_.Apply(std::vector<CommittedReport>{{StoredReport::Of(r), now_}});
  };
  auto origin = [&](const QueryService& q, const std::string& host) {
    v1::GetHostRequest req;
    req.set_host_id(host);
    v1::HostState resp;
    EXPECT_TRUE(q.DoGetHost(req, &resp).ok()) << host;
    return resp.constants_origin();
  };
  // From a sender before the origin field: canaries say a class's.
  store("h1", 120e-9, v1::CONSTANTS_ORIGIN_UNSPECIFIED, 0);
  store("h2", 400e-9, v1::CONSTANTS_ORIGIN_UNSPECIFIED, 3);
  store("h4", 120e-9, v1::CONSTANTS_ORIGIN_HOST_CALIBRATION, 0);
  // No usable c_visit: not a calibration (the seed default prices it).
  store("h5", 0, v1::CONSTANTS_ORIGIN_HOST_CALIBRATION, 0);
  EXPECT_EQ(origin(*service_, "h3"), v1::CONSTANTS_ORIGIN_SEED_DEFAULT);
  EXPECT_EQ(origin(*service_, "h1"), v1::CONSTANTS_ORIGIN_HOST_CALIBRATION);
  EXPECT_EQ(origin(*service_, "h2"), v1::CONSTANTS_ORIGIN_CLASS_CALIBRATION);
  EXPECT_EQ(origin(*service_, "h4"), v1::CONSTANTS_ORIGIN_HOST_CALIBRATION);
  EXPECT_EQ(origin(*service_, "h5"), v1::CONSTANTS_ORIGIN_SEED_DEFAULT);

  // With a canary of the sample hosts' class, the server prices a host
  // without a calibration of its own by the class; its own still wins.
  ClassCalibrations classes;
  v1::Calibration canary;
  canary.set_host_id("canary");
  canary.set_hardware_class("Intel(R) Xeon(R) Platinum 8480+ / 6.16");
  canary.set_c_visit_seconds(200e-9);
  classes.Add(canary);
  QueryOptions opts;
  opts.now = [this] { return now_; };
  opts.store = storage_.get();
  opts.classes = &classes;
  QueryService priced(&index_, storage_.get(), nullptr, opts);
  EXPECT_EQ(origin(priced, "h3"), v1::CONSTANTS_ORIGIN_CLASS_CALIBRATION);
  EXPECT_EQ(origin(priced, "h4"), v1::CONSTANTS_ORIGIN_HOST_CALIBRATION);
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

  v1::GetHostHistoryRequest hh;
  hh.set_host_id(big);
  v1::GetHostHistoryResponse hr;
  st = service_->DoGetHostHistory(hh, &hr);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(st.error_message(), "unknown host \"" + echoed + "\"");

  pa.Clear();
  pa.set_probe_kind(static_cast<v1::ProbeKind>(999));
  st = service_->DoPredictAttach(pa, &pr);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(st.error_message(), "probe_kind: unknown value 999");
}

std::vector<std::string> Ids(const v1::ListHostsResponse& r) {
  std::vector<std::string> ids;
  for (const auto& h : r.hosts()) ids.push_back(h.host_id());
  return ids;
}

TEST_F(QueryServiceTest, ListHostsPagesFiltersAndSortsEitherWay) {
  auto list = [&](const std::function<void(v1::ListHostsRequest&)>& set) {
    v1::ListHostsRequest req;
    set(req);
    v1::ListHostsResponse resp;
    grpc::Status st = service_->DoListHosts(req, &resp);
    EXPECT_TRUE(st.ok()) << st.error_message();
    return resp;
  };
  using V = std::vector<std::string>;
  // Pages of 2 by id: matched_hosts counts every match.
  v1::ListHostsResponse page = list([](auto& r) {
    r.set_sort(v1::HOST_SORT_HOST_ID);
    r.set_offset(2);
    r.set_limit(2);
  });
  EXPECT_EQ(Ids(page), (V{"h2", "h3"}));
  EXPECT_EQ(page.matched_hosts(), 6u);
  EXPECT_EQ(Ids(list([](auto& r) {
              r.set_sort(v1::HOST_SORT_HOST_ID);
              r.set_offset(5);
            })),
            (V{"h5"}));
  EXPECT_TRUE(Ids(list([](auto& r) { r.set_offset(6); })).empty());
  EXPECT_EQ(Ids(list([](auto& r) {
              r.set_sort(v1::HOST_SORT_HOST_ID);
              r.set_reverse(true);
              r.set_limit(3);
            })),
            (V{"h5", "h4", "h3"}));
  // Threads 10000 + 60000 i: h5 has the most.
  EXPECT_EQ(Ids(list([](auto& r) {
              r.set_sort(v1::HOST_SORT_THREADS);
              r.set_limit(2);
            })),
            (V{"h5", "h4"}));
  EXPECT_EQ(Ids(list([](auto& r) {
              r.set_sort(v1::HOST_SORT_THREADS);
              r.set_reverse(true);
              r.set_limit(2);
            })),
            (V{"h0", "h1"}));
  // The walk's margin grows with the thread count on these PREEMPT_NONE hosts.
  v1::ListHostsResponse by_margin =
      list([](auto& r) { r.set_sort(v1::HOST_SORT_MARGIN); });
  EXPECT_EQ(Ids(by_margin), (V{"h5", "h4", "h3", "h2", "h1", "h0"}));
  for (const auto& h : by_margin.hosts())
    EXPECT_TRUE(h.has_worst_margin()) << h.host_id();
  EXPECT_GT(by_margin.hosts(0).worst_margin(),
            by_margin.hosts(5).worst_margin());
  // h0 reported an hour ago: the only stale one.
  EXPECT_EQ(Ids(list([](auto& r) { r.set_stale(true); })), (V{"h0"}));
  EXPECT_EQ(list([](auto& r) { r.set_stale(false); }).matched_hosts(), 5u);
  // Every host runs 6.16.3.
  EXPECT_EQ(list([](auto& r) { r.set_kernel_prefix("6.16."); }).matched_hosts(),
            6u);
  EXPECT_EQ(
      list([](auto& r) { r.set_kernel_prefix("6.16.4"); }).matched_hosts(), 0u);
  EXPECT_EQ(list([](auto& r) {
              r.set_kernel_prefix("6.16");
              r.mutable_hosts()->set_labels("role=db");
            }).matched_hosts(),
            3u);
}

TEST_F(QueryServiceTest, FleetSummaryDrawsEveryHostInTheMarginStrip) {
  v1::FleetSummaryRequest req;
  req.set_strip_cells(4);
  v1::FleetSummaryResponse resp;
  ASSERT_TRUE(service_->DoFleetSummary(req, &resp).ok());
  // 6 hosts, 4 cells: ceil(6 / 4) = 2 hosts a cell, so 3 cells.
  ASSERT_EQ(resp.margin_strip_size(), 3);
  EXPECT_EQ(resp.margin_strip(0).first_host_id(), "h5");
  EXPECT_EQ(resp.margin_strip(1).first_host_id(), "h3");
  EXPECT_EQ(resp.margin_strip(2).first_host_id(), "h1");
  for (const auto& c : resp.margin_strip()) EXPECT_EQ(c.hosts(), 2u);
  EXPECT_GE(resp.margin_strip(0).min_margin(),
            resp.margin_strip(1).max_margin());
  // Not asked for: none.
  v1::FleetSummaryResponse plain;
  ASSERT_TRUE(service_->DoFleetSummary({}, &plain).ok());
  EXPECT_EQ(plain.margin_strip_size(), 0);
}

// Accuracy: a soft lockup of h1 compared with the report current then
// (seq 7: 3,200 threads without a shadow stack, PREEMPT_DYNAMIC booted
// none, so the whole walk is one non-yielding stretch) at the seed c_visit
// and at its class's calibrated one now.
TEST_F(QueryServiceTest, AccuracyComparesObservedSecondsWithThePredictions) {
  SampleHost h;
  h.host_id = "h1";
  h.threads = 3200;
  const v1::HostReport then = SampleReport(h, 7, now_ - absl::Hours(2));
  ReportRow r;
  r.host_id = "h1";
  r.seq = 7;
  r.observed_at_ns = absl::ToUnixNanos(now_ - absl::Hours(2));
  r.received_at_ns = r.observed_at_ns;
  r.blob = then.SerializeAsString();
  ASSERT_TRUE(storage_->WriteBatch({r}).ok());
  EventRow lockup =
      StoredEventRow("h1", 20, 3600, v1::EVENT_PREDICTION_YES, now_);
  v1::StoredEvent e;
  ASSERT_TRUE(e.ParseFromString(lockup.blob));
  e.mutable_event()->set_model(v1::EVENT_MODEL_FGRAPH_ATTACH);
  e.mutable_event()->set_seconds(26);
  e.set_prediction_seq(7);
  lockup.blob = e.SerializeAsString();
  // One without a stored prediction, one of a host nobody knows.
  EventRow bare = StoredEventRow("h1", 21, 1800, v1::EVENT_PREDICTION_NO, now_);
  EventRow stranger =
      StoredEventRow("nobody", 1, 600, v1::EVENT_PREDICTION_UNKNOWN, now_);
  ASSERT_TRUE(storage_->PutEvents({lockup, bare, stranger}).ok());

  ClassCalibrations classes;
  v1::Calibration c;
  c.set_host_id("canary");
  c.set_hardware_class("Intel(R) Xeon(R) Platinum 8480+ / 6.16");
  c.set_c_visit_seconds(200e-9);
  classes.Add(c);
  QueryOptions opts;
  opts.now = [this] { return now_; };
  opts.store = storage_.get();
  opts.events = storage_.get();
  opts.classes = &classes;
  QueryService service(&index_, storage_.get(), nullptr, opts);
  v1::AccuracyResponse resp;
  ASSERT_TRUE(service.DoAccuracy(v1::AccuracyRequest(), &resp).ok());
  EXPECT_EQ(resp.events_unclassified(), 1u);
  ASSERT_EQ(resp.classes_size(), 1);
  const v1::ClassAccuracy& k = resp.classes(0);
  EXPECT_EQ(k.hardware_class(), "Intel(R) Xeon(R) Platinum 8480+ / 6.16");
  EXPECT_EQ(k.canaries(), 1u);
  // A canary that does not say its walk: priced at its c_visit, one price.
  EXPECT_DOUBLE_EQ(k.c_visit_seconds(), 200e-9);
  EXPECT_EQ(k.curve_points(), 0u);
  EXPECT_EQ(k.visit_levels_size(), 0);
  EXPECT_EQ(k.hosts(), 6u);  // h0..h5
  EXPECT_EQ(k.events(), 2u);
  EXPECT_EQ(k.events_predicted(), 1u);
  EXPECT_EQ(k.events_missed(), 1u);
  ASSERT_EQ(k.samples_size(), 1);
  const v1::EventAccuracy& a = k.samples(0);
  EXPECT_EQ(a.host_id(), "h1");
  EXPECT_EQ(a.observed_seconds(), 26u);
  // V = 99 + 32 * 99 * 100 / 2 + 3200 = 161,699 visits, 100 passes:
  // then 88.7 ns * V + 2 us * 100 + 20 ns * 3200 = 14.6067013 ms;
  // now  200 ns * V + 0.264 ms = 32.6038 ms; each with the patching of the
  // host's 61,234 filter functions at 1 us joined to it (PREEMPT_NONE, no
  // reschedule point in x86's ftrace_replace_code()): + 61.234 ms.
  EXPECT_NEAR(a.predicted_seconds(), 75.8407013e-3, 1e-9);
  EXPECT_NEAR(a.ratio(), 26 / 75.8407013e-3, 1e-3);
  EXPECT_NEAR(a.calibrated_seconds(), 93.8378e-3, 1e-9);
  EXPECT_NEAR(a.calibrated_ratio(), 26 / 93.8378e-3, 1e-3);
  EXPECT_EQ(a.calibrated_basis(),
            "1 canary of class Intel(R) Xeon(R) Platinum 8480+ / 6.16");
  EXPECT_EQ(a.calibrated_origin(), v1::CONSTANTS_ORIGIN_CLASS_CALIBRATION);
  EXPECT_NEAR(k.median_ratio(), 26 / 75.8407013e-3, 1e-3);

  // The index shows h1 priced by a class (400 ns then): constants of its
  // class now are still the ones compared with (200 ns), told by the typed
  // origin, not by the sentence.
  auto reprice = [&](uint64_t seq, v1::ConstantsOrigin origin,
                     uint32_t canaries) {
    v1::HostReport r = SampleReport(h, seq, now_ - absl::Minutes(1));
    v1::Calibration* own = r.mutable_calibration();
    own->set_c_visit_seconds(
        origin == v1::CONSTANTS_ORIGIN_CLASS_CALIBRATION ? 400e-9 : 120e-9);
    own->set_class_canaries(canaries);
    own->set_hardware_class("Intel(R) Xeon(R) Platinum 8480+ / 6.16");
    own->set_origin(origin);
    own->mutable_measured_at()->set_seconds(1796139600);
    index_.Apply(std::vector<CommittedReport>{{StoredReport::Of(r), now_}});
    v1::AccuracyResponse again;
    EXPECT_TRUE(service.DoAccuracy(v1::AccuracyRequest(), &again).ok());
    return again.classes(0).samples(0);
  };
  v1::EventAccuracy by_class =
      reprice(8, v1::CONSTANTS_ORIGIN_CLASS_CALIBRATION, 3);
  EXPECT_NEAR(by_class.calibrated_seconds(), 93.8378e-3, 1e-9);
  EXPECT_EQ(by_class.calibrated_origin(),
            v1::CONSTANTS_ORIGIN_CLASS_CALIBRATION);
  // Its own calibration now (120 ns): 120 ns * V + 0.264 ms = 19.66788 ms,
  // + 61.234 ms of patching.
  v1::EventAccuracy own = reprice(9, v1::CONSTANTS_ORIGIN_HOST_CALIBRATION, 0);
  EXPECT_NEAR(own.calibrated_seconds(), 80.90188e-3, 1e-9);
  EXPECT_EQ(own.calibrated_origin(), v1::CONSTANTS_ORIGIN_HOST_CALIBRATION);
  EXPECT_EQ(own.calibrated_basis(),
            "this host's calibration 2026-12-01T15:40:00Z");

  v1::AccuracyRequest bad;
  bad.set_limit(10001);
  EXPECT_EQ(service.DoAccuracy(bad, &resp).error_message(),
            "limit 10001 is over 10000");
}

}  // namespace
}  // namespace tracehealth::server
