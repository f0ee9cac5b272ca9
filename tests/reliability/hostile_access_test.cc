// Who may talk to the server (hostile_input_fixture.h): queries with and
// without the bearer token, and mutual TLS refusing a missing or foreign
// client certificate, while ingest and the bystander go on.
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/reliability/hostile_input_fixture.h"

namespace tracehealth::testing {
namespace {

// Without a query token file queries are open; with one, only the exact
// bearer token passes, while ingest (agents) goes on.
TEST_F(HostileInputTest, QueryCredentials) {
  const std::string dir = NewTempDir("token");
  ASSERT_TRUE(WriteFile(dir + "/token", "s3cret-token\n").ok());
  Start({"--query_token_file=" + dir + "/token"});
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"", ""},
      {"authorization", "Bearer wrong"},
      {"authorization", "Bearer "},
      {"authorization", "Bearer s3cret"},
      {"authorization", "Bearer s3cret-token-and-more"},
      {"authorization", "Basic s3cret-token"},
      {"authorization", "s3cret-token"},
      {"authorization", "Bearer  s3cret-token"},
      {"x-api-key", "s3cret-token"},
  };
  for (const auto& [key, value] : refused) {
    for (int rpc = 0; rpc < 3; ++rpc) {
      grpc::ClientContext ctx;
      if (!key.empty()) ctx.AddMetadata(key, value);
      grpc::Status st;
      if (rpc == 0) {
        v1::ListHostsResponse resp;
        st = query_->ListHosts(&ctx, {}, &resp);
      } else if (rpc == 1) {
        v1::GetHostRequest req;
        req.set_host_id("bystander");
        v1::HostState resp;
        st = query_->GetHost(&ctx, req, &resp);
      } else {
        v1::FleetSummaryResponse resp;
        st = query_->FleetSummary(&ctx, {}, &resp);
      }
      EXPECT_EQ(st.error_code(), grpc::StatusCode::UNAUTHENTICATED)
          << key << ": " << value << " rpc " << rpc;
    }
  }
  grpc::ClientContext ok;
  ok.AddMetadata("authorization", "Bearer s3cret-token");
  EXPECT_GT(StoredReports("bystander", &ok), 0u);
  ExpectBystanderServed();
}

// Runs the openssl CLI in `dir`; true on exit 0.
bool Openssl(const std::string& dir, const std::string& args) {
  const std::string cmd =
      absl::StrCat("cd '", dir, "' && openssl ", args, " >/dev/null 2>&1");
  return std::system(cmd.c_str()) == 0;
}

// A CA in `dir` (prefix `ca`) and client certificates signed by it.
bool MakeCa(const std::string& dir, const std::string& ca) {
  return Openssl(dir,
                 absl::StrCat("req -x509 -newkey rsa:2048 -nodes -keyout ", ca,
                              ".key -out ", ca, ".pem -days 1 -subj /CN=", ca));
}
bool MakeCert(const std::string& dir, const std::string& ca,
              const std::string& name, const std::string& cn,
              const std::string& ext = "") {
  if (!Openssl(dir, absl::StrCat("req -newkey rsa:2048 -nodes -keyout ", name,
                                 ".key -out ", name, ".csr -subj /CN=", cn))) {
    return false;
  }
  return Openssl(
      dir, absl::StrCat("x509 -req -in ", name, ".csr -CA ", ca, ".pem -CAkey ",
                        ca, ".key -CAcreateserial -out ", name, ".pem -days 1",
                        ext.empty() ? "" : " -extfile " + ext));
}

TEST_F(HostileInputTest, MutualTlsRefusesMissingOrForeignCertificates) {
  const std::string d = NewTempDir("pki");
  ASSERT_TRUE(MakeCa(d, "ca"));
  ASSERT_TRUE(MakeCa(d, "rogue"));
  ASSERT_TRUE(WriteFile(d + "/server.ext",
                        "subjectAltName=DNS:localhost,IP:127.0.0.1\n")
                  .ok());
  ASSERT_TRUE(MakeCert(d, "ca", "server", "localhost", "server.ext"));
  ASSERT_TRUE(MakeCert(d, "ca", "bystander", "bystander"));
  ASSERT_TRUE(MakeCert(d, "ca", "host-a", "host-a"));
  ASSERT_TRUE(MakeCert(d, "rogue", "rogue-a", "host-a"));
  auto read = [&](const std::string& f) { return *ReadFile(d + "/" + f); };
  auto creds = [&](const std::string& cert) {
    grpc::SslCredentialsOptions o;
    o.pem_root_certs = read("ca.pem");
    if (!cert.empty()) {
      o.pem_private_key = read(cert + ".key");
      o.pem_cert_chain = read(cert + ".pem");
    }
    return grpc::SslCredentials(o);
  };
  grpc::ChannelArguments args;
  args.SetSslTargetNameOverride("localhost");
  Start({"--tls_cert=" + d + "/server.pem", "--tls_key=" + d + "/server.key",
         "--tls_client_ca=" + d + "/ca.pem"},
        creds("bystander"), args);

  // Each refused client connects on its own channel and gets an error
  // before anything is stored.
  auto attempt = [&](std::shared_ptr<grpc::ChannelCredentials> c,
                     const std::string& host) {
    grpc::ChannelArguments a = args;
    a.SetInt("tracehealth.attempt", std::rand());
    auto stub = v1::TelemetryIngest::NewStub(
        grpc::CreateCustomChannel(server_.grpc_addr, c, a));
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() +
                     std::chrono::seconds(10));
    auto stream = stub->Report(&ctx);
    stream->Write(Report(host, 1));
    stream->WritesDone();
    v1::Ack ack;
    uint64_t acked = 0;
    while (stream->Read(&ack)) acked = std::max(acked, ack.acked_seq());
    grpc::Status st = stream->Finish();
    if (!st.ok()) {
      EXPECT_EQ(acked, 0u) << host << " refused yet acked";
    }
    return st;
  };
  grpc::Status none = attempt(creds(""), "host-a");
  EXPECT_EQ(none.error_code(), grpc::StatusCode::UNAVAILABLE)
      << none.error_message();
  grpc::Status rogue = attempt(creds("rogue-a"), "host-a");
  EXPECT_EQ(rogue.error_code(), grpc::StatusCode::UNAVAILABLE)
      << rogue.error_message();
  grpc::Status plain = attempt(grpc::InsecureChannelCredentials(), "host-a");
  EXPECT_EQ(plain.error_code(), grpc::StatusCode::UNAVAILABLE)
      << plain.error_message();
  grpc::Status other = attempt(creds("host-a"), "host-b");
  EXPECT_EQ(other.error_code(), grpc::StatusCode::PERMISSION_DENIED)
      << other.error_message();
  grpc::Status spoof = attempt(creds("host-a"), "bystander");
  EXPECT_EQ(spoof.error_code(), grpc::StatusCode::PERMISSION_DENIED)
      << spoof.error_message();
  EXPECT_TRUE(attempt(creds("host-a"), "host-a").ok());
  EXPECT_EQ(StoredReports("host-a"), 1u);
  EXPECT_EQ(StoredReports("host-b"), 0u);
  ExpectBystanderServed();
}

}  // namespace
}  // namespace tracehealth::testing
