// tracehealthctl against the real server: tables, JSON, errors.
#include <signal.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/util/json_util.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/tracehealth/v1/ingest.grpc.pb.h"
#include "proto/tracehealth/v1/query.pb.h"
#include "tests/server/server_process.h"
#include "tests/util/sample_report.h"
#include "tests/util/subprocess.h"

namespace tracehealth::testing {
namespace {

struct CtlRun {
  int code;
  std::string out;
};

CtlRun Ctl(const std::string& dir, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {
      Runfile("tools/tracehealthctl/tracehealthctl")};
  argv.insert(argv.end(), args.begin(), args.end());
  std::string log = absl::StrCat(dir, "/ctl.out");
  std::remove(log.c_str());
  auto p = Subprocess::Start(argv, log);
  if (!p.ok()) return {-1, ""};
  auto rc = (*p)->Wait(absl::Seconds(30));
  auto out = ReadFile(log);
  return {rc.ok() ? *rc : -1, out.ok() ? *out : ""};
}

TEST(TracehealthctlTest, TablesJsonAndErrors) {
  std::string dir = NewTempDir("ctl");
  ASSERT_TRUE(WriteFile(dir + "/token", "tok\n").ok());
  auto sp = StartServer(dir, {"--query_token_file=" + dir + "/token"});
  ASSERT_TRUE(sp.ok()) << sp.status();
  {
    auto stub = v1::TelemetryIngest::NewStub(
        grpc::CreateChannel(sp->grpc_addr, grpc::InsecureChannelCredentials()));
    grpc::ClientContext ctx;
    auto stream = stub->Report(&ctx);
    server::SampleHost h;
    h.host_id = "ctl-host";
    h.threads = 300000;
    ASSERT_TRUE(stream->Write(server::SampleReport(h, 1, absl::Now())));
    v1::Ack ack;
    ASSERT_TRUE(stream->Read(&ack));
    EXPECT_EQ(ack.acked_seq(), 1u);
    stream->WritesDone();
    while (stream->Read(&ack)) {
    }
    ASSERT_TRUE(stream->Finish().ok());
  }
  const std::string server = "--server=" + sp->grpc_addr;
  const std::string token = "--token_file=" + dir + "/token";

  CtlRun predict =
      Ctl(dir, {server, token, "predict", "--probe=function_graph",
                "--hosts=ctl-host", "--threads=400000", "--preempt=full"});
  EXPECT_EQ(predict.code, 0) << predict.out;
  EXPECT_TRUE(absl::StrContains(predict.out, "HOST")) << predict.out;
  EXPECT_TRUE(absl::StrContains(predict.out, "ctl-host"));
  EXPECT_TRUE(absl::StrContains(predict.out, "400000"));
  EXPECT_TRUE(absl::StrContains(predict.out, "latency"))
      << predict.out;  // preemptible

  CtlRun json =
      Ctl(dir, {server, token, "--json", "predict", "--hosts=ctl-host"});
  ASSERT_EQ(json.code, 0) << json.out;
  v1::PredictAttachResponse resp;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(json.out, &resp).ok())
      << json.out;
  ASSERT_EQ(resp.answers_size(), 1);
  EXPECT_EQ(resp.answers(0).prediction().threads_total(), 300000u);

  for (const std::vector<std::string>& cmd :
       {std::vector<std::string>{"hosts", "--sort=host"},
        {"host", "ctl-host"},
        {"summary"},
        {"alerts"}}) {
    std::vector<std::string> args = {server, token};
    args.insert(args.end(), cmd.begin(), cmd.end());
    CtlRun r = Ctl(dir, args);
    EXPECT_EQ(r.code, 0) << cmd[0] << ": " << r.out;
    if (cmd[0] != "alerts") {
      EXPECT_TRUE(absl::StrContains(r.out, "ctl-host")) << r.out;
    }
    if (cmd[0] == "host") {
      // The report was sent without summaries; the server explains it.
      EXPECT_TRUE(absl::StrContains(r.out, ": first attach walks ")) << r.out;
    }
  }

  // An unreadable TLS file is named, not silently used as empty.
  CtlRun bad_ca =
      Ctl(dir, {server, token, "--tls_ca=/nonexistent/ca.pem", "hosts"});
  EXPECT_EQ(bad_ca.code, 2);
  EXPECT_TRUE(absl::StrContains(bad_ca.out, "--tls_ca")) << bad_ca.out;

  CtlRun no_token = Ctl(dir, {server, "hosts"});
  EXPECT_EQ(no_token.code, 1);
  EXPECT_TRUE(absl::StrContains(no_token.out, "bearer token")) << no_token.out;
  CtlRun unknown = Ctl(dir, {server, token, "host", "nope"});
  EXPECT_EQ(unknown.code, 1);
  CtlRun usage = Ctl(dir, {server, "frobnicate"});
  EXPECT_EQ(usage.code, 2);
  CtlRun bad_probe = Ctl(dir, {server, token, "predict", "--probe=nonsense"});
  EXPECT_EQ(bad_probe.code, 2);

  ASSERT_TRUE(sp->process->Signal(SIGTERM).ok());
  EXPECT_EQ(*sp->process->Wait(absl::Seconds(30)), 0);
}

}  // namespace
}  // namespace tracehealth::testing
