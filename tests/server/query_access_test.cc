// Who may read the fleet through FleetQuery, with certificates made by
// deploy/tls/make-certs.sh and the real server binary under mTLS: without
// --query_client_names any client certificate the CA signed (an agent's
// too) reads every host; with it only certificates whose CN or SAN matches,
// while agents keep reporting as before.
#include <signal.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/tracehealth/v1/ingest.grpc.pb.h"
#include "proto/tracehealth/v1/query.grpc.pb.h"
#include "tests/reliability/ingest_client.h"
#include "tests/server/server_process.h"
#include "tests/util/subprocess.h"
#include "tools/loadgen/sample_report.h"

namespace tracehealth::testing {
namespace {

class QueryAccessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    pki_ = NewTempDir("pki");
    // A CA, the server's certificate, two agents and an operator's tool.
    const std::string cmd = absl::StrCat(
        "bash '", Runfile("deploy/tls/make-certs.sh"), "' '", pki_,
        "' localhost agent-1 agent-2 ops-dashboard", " >/dev/null 2>&1");
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  }

  void TearDown() override {
    if (server_.process != nullptr && server_.process->running()) {
      ASSERT_TRUE(server_.process->Signal(SIGTERM).ok());
      EXPECT_EQ(*server_.process->Wait(absl::Seconds(30)), 0);
    }
  }

  void Start(const std::vector<std::string>& extra) {
    std::vector<std::string> flags = {"--tls_cert=" + pki_ + "/server.crt",
                                      "--tls_key=" + pki_ + "/server.key",
                                      "--tls_client_ca=" + pki_ + "/ca.crt"};
    flags.insert(flags.end(), extra.begin(), extra.end());
    auto sp = StartServer(NewTempDir("data"), flags);
    ASSERT_TRUE(sp.ok()) << sp.status();
    server_ = std::move(*sp);
  }

  std::shared_ptr<grpc::Channel> ChannelAs(const std::string& name) {
    grpc::SslCredentialsOptions o;
    o.pem_root_certs = *ReadFile(pki_ + "/ca.crt");
    o.pem_private_key = *ReadFile(pki_ + "/hosts/" + name + ".key");
    o.pem_cert_chain = *ReadFile(pki_ + "/hosts/" + name + ".crt");
    grpc::ChannelArguments args;
    args.SetSslTargetNameOverride("localhost");
    args.SetString("tracehealth.client", name);  // one connection each
    return grpc::CreateCustomChannel(server_.grpc_addr, grpc::SslCredentials(o),
                                     args);
  }

  void Report(const std::string& host) {
    auto stub = v1::TelemetryIngest::NewStub(ChannelAs(host));
    ReportStream s(stub.get());
    server::SampleHost h = server::FleetHost(1);
    h.host_id = host;
    ASSERT_TRUE(s.Send(server::SampleReport(h, 1, absl::Now())));
    EXPECT_TRUE(s.WaitAcked(1)) << host;
    EXPECT_TRUE(s.Finish().ok());
  }

  grpc::Status ListHostsAs(const std::string& name,
                           v1::ListHostsResponse* resp) {
    auto stub = v1::FleetQuery::NewStub(ChannelAs(name));
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() +
                     std::chrono::seconds(10));
    return stub->ListHosts(&ctx, {}, resp);
  }

  std::string pki_;
  ServerProcess server_;
};

TEST_F(QueryAccessTest, WithoutARestrictionAnAgentCertificateReadsTheFleet) {
  Start({});
  Report("agent-1");
  Report("agent-2");
  v1::ListHostsResponse resp;
  grpc::Status st = ListHostsAs("agent-1", &resp);
  ASSERT_TRUE(st.ok()) << st.error_message();
  // agent-1's certificate lists agent-2 too: what the README warns of.
  EXPECT_EQ(resp.matched_hosts(), 2u);
}

TEST_F(QueryAccessTest, QueryClientNamesAdmitsOnlyMatchingCertificates) {
  Start({"--query_client_names=ops-.*"});
  Report("agent-1");
  Report("agent-2");
  v1::ListHostsResponse resp;
  grpc::Status ops = ListHostsAs("ops-dashboard", &resp);
  ASSERT_TRUE(ops.ok()) << ops.error_message();
  EXPECT_EQ(resp.matched_hosts(), 2u);
  for (const std::string agent : {"agent-1", "agent-2"}) {
    v1::ListHostsResponse none;
    grpc::Status st = ListHostsAs(agent, &none);
    EXPECT_EQ(st.error_code(), grpc::StatusCode::PERMISSION_DENIED) << agent;
    // CN and the DNS SAN, both the agent's id.
    EXPECT_EQ(st.error_message(),
              absl::StrCat("client certificate (", agent, ", ", agent,
                           ") may not use the query API "
                           "(--query_client_names)"));
    EXPECT_EQ(none.hosts_size(), 0);
  }
  // The pattern matches whole names: "ops-dashboard" does not match "ops".
  ASSERT_TRUE(server_.process->Signal(SIGTERM).ok());
  EXPECT_EQ(*server_.process->Wait(absl::Seconds(30)), 0);
  Start({"--query_client_names=ops"});
  v1::ListHostsResponse partial;
  EXPECT_EQ(ListHostsAs("ops-dashboard", &partial).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
}

TEST_F(QueryAccessTest, QueryClientNamesNeedsClientCertificates) {
  const std::string data = NewTempDir("data");
  const std::string log = data + "/server.log";
  auto p = Subprocess::Start(
      {Runfile("server/tracehealth-server"), "--data_dir=" + data,
       "--listen=127.0.0.1:0", "--metrics_listen=127.0.0.1:0",
       "--query_client_names=ops-.*"},
      log);
  ASSERT_TRUE(p.ok()) << p.status();
  auto rc = (*p)->Wait(absl::Seconds(30));
  ASSERT_TRUE(rc.ok()) << rc.status();
  EXPECT_EQ(*rc, 1);
  EXPECT_EQ(*ReadFile(log),
            "tracehealth-server: INVALID_ARGUMENT: --query_client_names needs "
            "--tls_client_ca (client certificates)\n");
}

}  // namespace
}  // namespace tracehealth::testing
