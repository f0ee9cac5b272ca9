// End-to-end tests of tracehealth-server: the real binary on loopback, real
// gRPC clients, a real SQLite file.
#include <signal.h>

#include <cmath>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/tracehealth/v1/ingest.grpc.pb.h"
#include "proto/tracehealth/v1/query.grpc.pb.h"
#include "server/storage/sqlite/sqlite_storage.h"
#include "tests/reliability/ingest_client.h"
#include "tests/server/server_process.h"
#include "tests/util/sample_report.h"
#include "tests/util/subprocess.h"

namespace tracehealth::testing {
namespace {

using server::FleetHost;
using server::SampleHost;
using server::SampleReport;

SampleHost Host(const std::string& id, uint64_t threads,
                const std::string& role = "db") {
  SampleHost h;
  h.host_id = id;
  h.threads = threads;
  h.role = role;
  return h;
}

class ServerTest : public ::testing::Test {
 protected:
  void Start(std::vector<std::string> flags = {}) {
    if (data_dir_.empty()) data_dir_ = NewTempDir("server");
    auto sp = StartServer(data_dir_, flags);
    ASSERT_TRUE(sp.ok()) << sp.status();
    server_ = std::move(*sp);
    channel_ = grpc::CreateChannel(server_.grpc_addr,
                                   grpc::InsecureChannelCredentials());
    ingest_ = v1::TelemetryIngest::NewStub(channel_);
    query_ = v1::FleetQuery::NewStub(channel_);
  }
  void TearDown() override {
    // Close this client's connection first: the server's drain waits (up to
    // 5 s) for open calls.
    ingest_.reset();
    query_.reset();
    channel_.reset();
    if (server_.process != nullptr && server_.process->running()) {
      ASSERT_TRUE(server_.process->Signal(SIGTERM).ok());
      auto rc = server_.process->Wait(absl::Seconds(30));
      ASSERT_TRUE(rc.ok()) << rc.status();
      EXPECT_EQ(*rc, 0);
    }
  }

  std::string data_dir_;
  ServerProcess server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::TelemetryIngest::Stub> ingest_;
  std::unique_ptr<v1::FleetQuery::Stub> query_;
};

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

TEST_F(ServerTest, BadReportsRejectedWhileOthersAreServed) {
  Start({"--max_report_bytes=200000", "--max_message_bytes=1000000"});
  absl::Time now = absl::Now();
  ReportStream good(ingest_.get());
  ASSERT_TRUE(good.Send(SampleReport(Host("good", 1000), 1, now)));
  ASSERT_TRUE(good.WaitAcked(1));

  ReportStream bad(ingest_.get());
  ASSERT_TRUE(bad.Send(SampleReport(Host("bad", 1000), 1, now)));
  v1::HostReport nan = SampleReport(Host("bad", 1000), 2, now);
  nan.set_interval_seconds(std::nan(""));
  ASSERT_TRUE(bad.Send(nan));
  v1::HostReport zero = SampleReport(Host("bad", 1000), 0, now);
  ASSERT_TRUE(bad.Send(zero));
  v1::HostReport future =
      SampleReport(Host("bad", 1000), 3, now + absl::Hours(5));
  ASSERT_TRUE(bad.Send(future));
  v1::HostReport big = SampleReport(Host("bad", 1000), 4, now);
  big.mutable_snapshot()->mutable_kernel()->set_cmdline(
      std::string(300000, 'x'));
  ASSERT_TRUE(bad.Send(big));
  ASSERT_TRUE(bad.Send(SampleReport(Host("bad", 1000), 5, now)));
  ASSERT_TRUE(bad.WaitAcked(5));
  ASSERT_TRUE(bad.WaitRejections(4));
  std::vector<v1::Rejection> rej = bad.rejections();
  ASSERT_EQ(rej.size(), 4u);
  EXPECT_EQ(rej[0].seq(), 2u);
  EXPECT_EQ(rej[1].seq(), 0u);
  EXPECT_EQ(rej[2].seq(), 3u);
  EXPECT_EQ(rej[3].seq(), 4u);
  for (const auto& r : rej) EXPECT_EQ(r.code(), 3) << r.message();
  EXPECT_TRUE(absl::StrContains(rej[3].message(), "bytes"));

  // Over the transport limit: gRPC itself ends that stream.
  v1::HostReport huge = SampleReport(Host("bad", 1000), 6, now);
  huge.mutable_snapshot()->mutable_kernel()->set_cmdline(
      std::string(1200000, 'x'));
  bad.Send(huge);
  grpc::Status st = bad.Finish();
  EXPECT_EQ(st.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
      << st.error_message();

  // The other stream keeps working.
  ASSERT_TRUE(good.Send(SampleReport(Host("good", 1000), 2, now)));
  ASSERT_TRUE(good.WaitAcked(2));
  EXPECT_TRUE(good.Finish().ok());

  // A stream may not switch hosts.
  ReportStream sw(ingest_.get());
  ASSERT_TRUE(sw.Send(SampleReport(Host("one", 1000), 1, now)));
  ASSERT_TRUE(sw.WaitAcked(1));
  sw.Send(SampleReport(Host("two", 1000), 1, now));
  EXPECT_EQ(sw.Finish().error_code(), grpc::StatusCode::PERMISSION_DENIED);

  grpc::ClientContext ctx;
  v1::GetHostRequest req;
  req.set_host_id("bad");
  v1::HostState hs;
  ASSERT_TRUE(query_->GetHost(&ctx, req, &hs).ok());
  EXPECT_EQ(hs.reports(), 2u);  // seq 1 and 5
  grpc::ClientContext ctx2;
  req.set_host_id("two");
  EXPECT_EQ(query_->GetHost(&ctx2, req, &hs).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

TEST_F(ServerTest, UndecodableReportEndsTheStreamWithInvalidArgument) {
  Start();
  absl::Time now = absl::Now();
  ReportStream s(ingest_.get());
  ASSERT_TRUE(s.Send(SampleReport(Host("decode", 1000), 1, now)));
  ASSERT_TRUE(s.WaitAcked(1));
  v1::HostReport bad = SampleReport(Host("decode", 1000), 2, now);
  (*bad.mutable_labels())["role"] = std::string("\xc3\x28");  // invalid UTF-8
  s.Send(bad);
  grpc::Status st = s.Finish();
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
      << st.error_message();
  EXPECT_EQ(s.acked(), 1u);
  // "." is not a host.
  ReportStream dot(ingest_.get());
  ASSERT_TRUE(dot.Send(SampleReport(Host(".", 1000), 1, now)));
  ASSERT_TRUE(dot.WaitRejections(1));
  EXPECT_EQ(dot.rejections()[0].code(), 3);
  EXPECT_TRUE(dot.Finish().ok());
}

TEST_F(ServerTest, FloodingHostIsRateLimitedOthersAreNot) {
  Start({"--host_report_rate=2", "--host_report_burst=20"});
  absl::Time now = absl::Now();
  ReportStream flood(ingest_.get());
  v1::HostReport r = SampleReport(Host("flooder", 1000), 1, now);
  for (uint64_t seq = 1; seq <= 200; ++seq) {
    r.set_seq(seq);
    if (!flood.Send(r)) break;
  }
  grpc::Status st = flood.Finish();
  EXPECT_EQ(st.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
      << st.error_message();
  EXPECT_GE(flood.acked(), 20u);  // the burst was stored and acked
  EXPECT_LT(flood.acked(), 40u);
  ReportStream other(ingest_.get());
  ASSERT_TRUE(other.Send(SampleReport(Host("quiet", 1000), 1, now)));
  ASSERT_TRUE(other.WaitAcked(1));
  EXPECT_TRUE(other.Finish().ok());
  grpc::ClientContext ctx;
  v1::GetHostRequest req;
  req.set_host_id("flooder");
  v1::HostState hs;
  ASSERT_TRUE(query_->GetHost(&ctx, req, &hs).ok());
  EXPECT_EQ(hs.reports(), flood.acked());
  auto metrics = HttpGet(server_.metrics_addr, "/metrics");
  ASSERT_TRUE(metrics.ok());
  EXPECT_TRUE(absl::StrContains(
      *metrics, "tracehealth_ingest_reports_total{result=\"rate_limited\"} 1"))
      << *metrics;
}

TEST_F(ServerTest, BearerTokenGuardsQueries) {
  std::string dir = NewTempDir("token");
  ASSERT_TRUE(WriteFile(dir + "/token", "s3cret\n").ok());
  Start({"--query_token_file=" + dir + "/token"});
  v1::ListHostsResponse resp;
  {
    grpc::ClientContext ctx;
    EXPECT_EQ(query_->ListHosts(&ctx, {}, &resp).error_code(),
              grpc::StatusCode::UNAUTHENTICATED);
  }
  {
    grpc::ClientContext ctx;
    ctx.AddMetadata("authorization", "Bearer wrong");
    EXPECT_EQ(query_->ListHosts(&ctx, {}, &resp).error_code(),
              grpc::StatusCode::UNAUTHENTICATED);
  }
  {
    grpc::ClientContext ctx;
    ctx.AddMetadata("authorization", "Bearer s3cret");
    EXPECT_TRUE(query_->ListHosts(&ctx, {}, &resp).ok());
  }
}

// Runs the openssl CLI; true on exit 0.
bool Openssl(const std::string& dir, const std::string& args) {
  std::string cmd =
      absl::StrCat("cd '", dir, "' && openssl ", args, " >/dev/null 2>&1");
  return std::system(cmd.c_str()) == 0;
}

TEST_F(ServerTest, MutualTlsBindsHostIdentity) {
  std::string d = NewTempDir("pki");
  ASSERT_TRUE(
      Openssl(d,
              "req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem "
              "-days 1 -subj /CN=test-ca"));
  ASSERT_TRUE(
      Openssl(d,
              "req -newkey rsa:2048 -nodes -keyout server.key -out server.csr "
              "-subj /CN=localhost"));
  ASSERT_TRUE(WriteFile(d + "/server.ext",
                        "subjectAltName=DNS:localhost,IP:127.0.0.1\n")
                  .ok());
  ASSERT_TRUE(Openssl(
      d,
      "x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial "
      "-out server.pem -days 1 -extfile server.ext"));
  ASSERT_TRUE(
      Openssl(d,
              "req -newkey rsa:2048 -nodes -keyout client.key -out client.csr "
              "-subj /CN=host-a"));
  ASSERT_TRUE(Openssl(
      d,
      "x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial "
      "-out client.pem -days 1"));
  Start({"--tls_cert=" + d + "/server.pem", "--tls_key=" + d + "/server.key",
         "--tls_client_ca=" + d + "/ca.pem"});
  auto read = [&](const std::string& f) { return *ReadFile(d + "/" + f); };
  grpc::SslCredentialsOptions opts;
  opts.pem_root_certs = read("ca.pem");
  opts.pem_private_key = read("client.key");
  opts.pem_cert_chain = read("client.pem");
  grpc::ChannelArguments args;
  args.SetSslTargetNameOverride("localhost");
  auto channel = grpc::CreateCustomChannel(server_.grpc_addr,
                                           grpc::SslCredentials(opts), args);
  auto stub = v1::TelemetryIngest::NewStub(channel);
  absl::Time now = absl::Now();
  {
    ReportStream as_a(stub.get());
    ASSERT_TRUE(as_a.Send(SampleReport(Host("host-a", 1000), 1, now)));
    ASSERT_TRUE(as_a.WaitAcked(1));
    EXPECT_TRUE(as_a.Finish().ok());
  }
  {
    ReportStream as_b(stub.get());
    as_b.Send(SampleReport(Host("host-b", 1000), 1, now));
    grpc::Status st = as_b.Finish();
    EXPECT_EQ(st.error_code(), grpc::StatusCode::PERMISSION_DENIED)
        << st.error_message();
  }
  {
    // No client certificate: the handshake fails.
    grpc::SslCredentialsOptions anon;
    anon.pem_root_certs = read("ca.pem");
    auto ch = grpc::CreateCustomChannel(server_.grpc_addr,
                                        grpc::SslCredentials(anon), args);
    auto s = v1::TelemetryIngest::NewStub(ch);
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() +
                     std::chrono::seconds(5));
    auto stream = s->Report(&ctx);
    stream->Write(SampleReport(Host("host-a", 1000), 2, now));
    stream->WritesDone();
    v1::Ack ack;
    while (stream->Read(&ack)) {
    }
    EXPECT_FALSE(stream->Finish().ok());
  }
  // Plaintext clients are refused too.
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  v1::ListHostsResponse resp;
  EXPECT_FALSE(query_->ListHosts(&ctx, {}, &resp).ok());
}

}  // namespace
}  // namespace tracehealth::testing
