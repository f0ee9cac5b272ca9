// End-to-end tests of tracehealth-server: the real binary on loopback, real
// gRPC clients, a real SQLite file (server_test_fixture.h). Reports in,
// answers out: ingest then query, what-if answers, and a kill during ingest
// that loses nothing acked.
#include <signal.h>

#include <cmath>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "server/storage/sqlite/sqlite_storage.h"
#include "tests/reliability/ingest_client.h"
#include "tests/server/server_test_fixture.h"

namespace tracehealth::testing {
namespace {

using server::FleetHost;
using server::SampleHost;
using server::SampleReport;

TEST_F(ServerTest, IngestThenQuery) {
  Start();
  absl::Time now = absl::Now();
  {
    ReportStream a(ingest_.get());
    for (uint64_t seq = 1; seq <= 5; ++seq) {
      ASSERT_TRUE(a.Send(SampleReport(Host("db-1", 100000 + seq), seq, now)));
    }
    ASSERT_TRUE(a.WaitAcked(5));
    // A replay of stored seqs is acked and not stored again.
    ASSERT_TRUE(a.Send(SampleReport(Host("db-1", 100003), 3, now)));
    EXPECT_TRUE(a.Finish().ok());
  }
  {
    ReportStream b(ingest_.get());
    ASSERT_TRUE(b.Send(SampleReport(Host("web-1", 2000, "web"), 1, now)));
    ASSERT_TRUE(b.WaitAcked(1));
    EXPECT_TRUE(b.Finish().ok());
  }

  grpc::ClientContext c1;
  v1::GetHostRequest gh;
  gh.set_host_id("db-1");
  v1::HostState state;
  ASSERT_TRUE(query_->GetHost(&c1, gh, &state).ok());
  EXPECT_EQ(state.reports(), 5u);
  EXPECT_EQ(state.latest().seq(), 5u);
  EXPECT_EQ(state.labels().at("role"), "db");
  EXPECT_FALSE(state.stale());

  grpc::ClientContext c2;
  v1::PredictAttachRequest pa;
  pa.mutable_hosts()->add_host_ids("db-1");
  pa.mutable_hosts()->add_host_ids("nope");
  pa.set_probe_kind(v1::PROBE_KIND_FUNCTION_GRAPH_TRACER);
  v1::PredictAttachResponse par;
  ASSERT_TRUE(query_->PredictAttach(&c2, pa, &par).ok());
  ASSERT_EQ(par.answers_size(), 1);
  ASSERT_EQ(par.unknown_hosts_size(), 1);
  EXPECT_EQ(par.unknown_hosts(0), "nope");
  const auto& ans = par.answers(0);
  EXPECT_EQ(ans.host_id(), "db-1");
  EXPECT_EQ(ans.prediction().threads_total(), 100005u);
  EXPECT_GT(ans.prediction().latency_seconds(), 0);
  EXPECT_FALSE(ans.recommendation().empty());
  EXPECT_LT(ans.data_age().seconds(), 60);

  grpc::ClientContext c3;
  v1::PredictAttachRequest by_label;
  by_label.mutable_hosts()->set_labels("role=~d.*");
  v1::PredictAttachResponse lr;
  ASSERT_TRUE(query_->PredictAttach(&c3, by_label, &lr).ok());
  ASSERT_EQ(lr.matched_hosts(), 1u);
  EXPECT_EQ(lr.answers(0).host_id(), "db-1");

  grpc::ClientContext c4;
  v1::PredictAttachRequest bad_sel;
  bad_sel.mutable_hosts()->set_labels("role=~(");
  EXPECT_EQ(query_->PredictAttach(&c4, bad_sel, &lr).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);

  grpc::ClientContext c5;
  v1::ListHostsRequest lh;
  lh.set_sort(v1::HOST_SORT_HOST_ID);
  v1::ListHostsResponse lhr;
  ASSERT_TRUE(query_->ListHosts(&c5, lh, &lhr).ok());
  ASSERT_EQ(lhr.hosts_size(), 2);
  EXPECT_EQ(lhr.hosts(0).host_id(), "db-1");
  EXPECT_EQ(lhr.hosts(1).host_id(), "web-1");
  EXPECT_EQ(lhr.hosts(0).threads(), 100005u);

  grpc::ClientContext c6;
  v1::FleetSummaryResponse fs;
  ASSERT_TRUE(query_->FleetSummary(&c6, v1::FleetSummaryRequest(), &fs).ok());
  EXPECT_EQ(fs.hosts(), 2u);
  uint32_t counted = 0;
  for (const auto& rc : fs.by_risk()) counted += rc.hosts();
  EXPECT_EQ(counted, 2u);
  ASSERT_GE(fs.worst_size(), 1);

  grpc::ClientContext c7;
  v1::ListAlertsResponse al;
  EXPECT_TRUE(query_->ListAlerts(&c7, v1::ListAlertsRequest(), &al).ok());

  auto metrics = HttpGet(server_.metrics_addr, "/metrics");
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_TRUE(absl::StrContains(*metrics,
                                "tracehealth_attach_latency_seconds{host=\"db-"
                                "1\",probe_kind=\"function_graph_tracer\"}"))
      << *metrics;
  EXPECT_TRUE(absl::StrContains(
      *metrics, "tracehealth_ingest_reports_total{result=\"stored\"} 6"));
  EXPECT_TRUE(absl::StrContains(
      *metrics, "tracehealth_ingest_reports_total{result=\"duplicate\"} 1"));
  // db-1 (100,005 threads on PREEMPT_NONE: a 13.9 s walk, a warning) has
  // series of its own; web-1 (2,000 threads) is only in the fleet's
  // aggregates.
  EXPECT_TRUE(
      absl::StrContains(*metrics, "tracehealth_host_risk{host=\"db-1\"} 3\n"));
  EXPECT_FALSE(absl::StrContains(*metrics, "web-1")) << *metrics;
  EXPECT_TRUE(absl::StrContains(
      *metrics, "tracehealth_fleet_hosts{risk=\"warning\"} 1\n"));
  EXPECT_TRUE(
      absl::StrContains(*metrics, "tracehealth_metrics_host_series_hosts 1\n"));
  EXPECT_TRUE(absl::StrContains(*metrics, "tracehealth_query_requests_total{"));

  // The index is rebuilt from SQLite after a restart.
  ASSERT_TRUE(server_.process->Signal(SIGTERM).ok());
  ASSERT_EQ(*server_.process->Wait(absl::Seconds(30)), 0);
  Start();
  grpc::ClientContext c8;
  v1::HostState again;
  ASSERT_TRUE(query_->GetHost(&c8, gh, &again).ok());
  EXPECT_EQ(again.reports(), 5u);
  EXPECT_EQ(again.latest().seq(), 5u);
}

TEST_F(ServerTest, WhatIfAnswersFollowTheModel) {
  Start();
  {
    ReportStream s(ingest_.get());
    ASSERT_TRUE(s.Send(SampleReport(Host("big", 200000), 1, absl::Now())));
    ASSERT_TRUE(s.WaitAcked(1));
    EXPECT_TRUE(s.Finish().ok());
  }
  auto predict = [&](const v1::WhatIf& w) {
    grpc::ClientContext ctx;
    v1::PredictAttachRequest req;
    req.mutable_hosts()->add_host_ids("big");
    req.set_probe_kind(v1::PROBE_KIND_FUNCTION_GRAPH_TRACER);
    *req.mutable_what_if() = w;
    v1::PredictAttachResponse resp;
    grpc::Status st = query_->PredictAttach(&ctx, req, &resp);
    EXPECT_TRUE(st.ok()) << st.error_message();
    return resp.answers_size() == 1 ? resp.answers(0).prediction()
                                    : v1::AttachPrediction();
  };
  v1::AttachPrediction base = predict({});
  v1::WhatIf doubled;
  doubled.set_threads(400000);
  v1::AttachPrediction twice = predict(doubled);
  EXPECT_EQ(twice.threads_total(), 400000u);
  EXPECT_EQ(twice.null_threads(), 400000u);  // stored N_null bound dropped
  // The walk is quadratic in threads: about 4x the walk time.
  double ratio = twice.walk_seconds() / base.walk_seconds();
  EXPECT_GT(ratio, 3.6) << base.walk_seconds() << " -> "
                        << twice.walk_seconds();
  EXPECT_LT(ratio, 4.4);
  // The seed-000 batch cuts the walk by about 32x.
  v1::WhatIf batched;
  batched.set_batch(1024);
  v1::AttachPrediction b1024 = predict(batched);
  EXPECT_EQ(b1024.batch(), 1024u);
  EXPECT_LT(b1024.walk_seconds(), base.walk_seconds() / 20);
  // A preemptible kernel turns a stall into latency only.
  v1::WhatIf preempt;
  preempt.set_threads(400000);
  preempt.set_preempt_mode(v1::PREEMPT_MODE_FULL);
  v1::AttachPrediction full = predict(preempt);
  EXPECT_EQ(twice.risk(), v1::RISK_STALL);
  EXPECT_LE(full.risk(), v1::RISK_LATENCY);
  // Fgraph already active: no shadow-stack walk, only a new user's one
  // init_task_vars() pass (6.11+): 88.7e-9 * 200,000 + 2e-6 = 17.742 ms.
  v1::WhatIf active;
  active.set_fgraph_active(true);
  v1::AttachPrediction act = predict(active);
  EXPECT_TRUE(act.fgraph_already_active());
  EXPECT_EQ(act.passes(), 1u);
  EXPECT_NEAR(act.walk_seconds(), 0.017742, 1e-9);
  EXPECT_EQ(act.shadow_stack_bytes(), 0u);
  // Invalid what-ifs are refused.
  grpc::ClientContext ctx;
  v1::PredictAttachRequest req;
  req.mutable_what_if()->set_batch(0);
  v1::PredictAttachResponse resp;
  EXPECT_EQ(query_->PredictAttach(&ctx, req, &resp).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(ServerTest, KillDuringIngestLosesNothingAcked) {
  Start();
  constexpr int kHosts = 4;
  constexpr uint64_t kPerHost = 400;
  std::vector<v1::HostReport> templates;
  for (int h = 0; h < kHosts; ++h)
    templates.push_back(SampleReport(FleetHost(h), 1, absl::Now()));
  std::vector<uint64_t> acked(kHosts, 0);
  std::vector<uint64_t> sent(kHosts, 0);
  {
    std::vector<std::unique_ptr<ReportStream>> streams;
    for (int h = 0; h < kHosts; ++h)
      streams.push_back(std::make_unique<ReportStream>(ingest_.get()));
    std::vector<std::thread> senders;
    for (int h = 0; h < kHosts; ++h) {
      senders.emplace_back([&, h] {
        v1::HostReport r = templates[h];
        for (uint64_t seq = 1; seq <= kPerHost; ++seq) {
          r.set_seq(seq);
          if (!streams[h]->Send(r)) break;
          sent[h] = seq;
        }
      });
    }
    // Kill once some reports of every host are acked.
    for (int h = 0; h < kHosts; ++h) ASSERT_TRUE(streams[h]->WaitAcked(20));
    server_.process->Kill();
    for (auto& t : senders) t.join();
    for (int h = 0; h < kHosts; ++h) {
      streams[h]->WaitAcked(kPerHost + 1, absl::Milliseconds(100));
      acked[h] = streams[h]->acked();
    }
  }
  server_.process.reset();
  // Restart on the same data: every acked (host, seq) is there.
  Start();
  for (int h = 0; h < kHosts; ++h) {
    grpc::ClientContext ctx;
    v1::GetHostRequest req;
    req.set_host_id(templates[h].host_id());
    v1::HostState st;
    ASSERT_TRUE(query_->GetHost(&ctx, req, &st).ok());
    EXPECT_GE(st.latest().seq(), acked[h]);
  }
  // The agent replays everything it sent; nothing is stored twice.
  for (int h = 0; h < kHosts; ++h) {
    ReportStream s(ingest_.get());
    v1::HostReport r = templates[h];
    for (uint64_t seq = 1; seq <= kPerHost; ++seq) {
      r.set_seq(seq);
      ASSERT_TRUE(s.Send(r));
    }
    ASSERT_TRUE(s.WaitAcked(kPerHost));
    EXPECT_TRUE(s.Finish().ok());
  }
  ASSERT_TRUE(server_.process->Signal(SIGTERM).ok());
  ASSERT_EQ(*server_.process->Wait(absl::Seconds(30)), 0);
  auto storage = server::SqliteStorage::Open(data_dir_ + "/tracehealth.db");
  ASSERT_TRUE(storage.ok()) << storage.status();
  for (int h = 0; h < kHosts; ++h) {
    const std::string& id = templates[h].host_id();
    EXPECT_EQ(*(*storage)->CountReports(id), static_cast<int64_t>(kPerHost))
        << id;
    for (uint64_t seq = 1; seq <= acked[h]; ++seq) {
      ASSERT_TRUE((*storage)->GetReport(id, seq).ok()) << id << "/" << seq;
    }
  }
  EXPECT_GT(acked[0] + acked[1] + acked[2] + acked[3], 0u);
}

}  // namespace
}  // namespace tracehealth::testing
