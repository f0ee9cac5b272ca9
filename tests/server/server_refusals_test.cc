// End-to-end tests of tracehealth-server (server_test_fixture.h): what it
// refuses while serving everyone else: bad and undecodable reports, a
// flooding host, queries without the bearer token, agents without a client
// certificate of the CA (mutual TLS binding a certificate to its host id).
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/reliability/ingest_client.h"
#include "tests/server/server_test_fixture.h"

namespace tracehealth::testing {
namespace {

using server::SampleHost;
using server::SampleReport;

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
