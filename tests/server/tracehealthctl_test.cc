// tracehealthctl against the real server: tables, JSON, errors.
#include <signal.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/util/json_util.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/tracehealth/v1/ingest.grpc.pb.h"
#include "proto/tracehealth/v1/query.pb.h"
#include "tests/server/server_process.h"
#include "tests/util/subprocess.h"
#include "tools/loadgen/sample_report.h"

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

// Sends one report of `host` to the server at `addr`.
void SendReport(const std::string& addr, const server::SampleHost& host) {
  auto stub = v1::TelemetryIngest::NewStub(
      grpc::CreateChannel(addr, grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  auto stream = stub->Report(&ctx);
  ASSERT_TRUE(stream->Write(server::SampleReport(host, 1, absl::Now())));
  v1::Ack ack;
  ASSERT_TRUE(stream->Read(&ack));
  ASSERT_EQ(ack.acked_seq(), 1u);
  stream->WritesDone();
  while (stream->Read(&ack)) {
  }
  ASSERT_TRUE(stream->Finish().ok());
}

TEST(TracehealthctlTest, TablesJsonAndErrors) {
  std::string dir = NewTempDir("ctl");
  ASSERT_TRUE(WriteFile(dir + "/token", "tok\n").ok());
  auto sp = StartServer(dir, {"--query_token_file=" + dir + "/token"});
  ASSERT_TRUE(sp.ok()) << sp.status();
  server::SampleHost h;
  h.host_id = "ctl-host";
  h.threads = 300000;
  SendReport(sp->grpc_addr, h);
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

  // A rollout plan: 300,000 threads on PREEMPT_NONE walk for minutes (a
  // lockup risk); on a preemptible kernel the same walk is over a 2 s
  // budget.
  CtlRun plan = Ctl(dir, {server, token, "plan", "--probe=kprobe_multi_return",
                          "--max_latency=2s"});
  EXPECT_EQ(plan.code, 0) << plan.out;
  EXPECT_TRUE(absl::StrContains(
      plan.out,
      "kprobe_multi_return on 1 host(s), at most 2.00 s an attach: 0 safe, 0 "
      "over budget, 1 lockup risk, 0 unknown"))
      << plan.out;
  EXPECT_TRUE(absl::StrContains(plan.out, "wave 1: ctl-host\n")) << plan.out;
  CtlRun lazy = Ctl(dir, {server, token, "--json", "plan", "--max_latency=2s",
                          "--preempt=lazy"});
  ASSERT_EQ(lazy.code, 0) << lazy.out;
  v1::PredictAttachResponse planned;
  ASSERT_TRUE(
      google::protobuf::util::JsonStringToMessage(lazy.out, &planned).ok())
      << lazy.out;
  EXPECT_EQ(planned.plan().over_budget(), 1u);
  ASSERT_EQ(planned.answers_size(), 1);
  EXPECT_EQ(planned.answers(0).plan_class(), v1::PLAN_CLASS_OVER_BUDGET);
  CtlRun no_budget = Ctl(dir, {server, token, "plan"});
  EXPECT_EQ(no_budget.code, 2);
  EXPECT_TRUE(absl::StrContains(no_budget.out, "--max_latency is required"))
      << no_budget.out;

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

TEST(TracehealthctlTest, HelpForTheToolAndEachCommand) {
  const std::string dir = NewTempDir("ctl-help");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--help"}, {"-h"}, {"help"}}) {
    CtlRun help = Ctl(dir, args);
    EXPECT_EQ(help.code, 0) << args[0] << "\n" << help.out;
    for (const char* command :
         {"  predict [", "  plan --max_latency=", "  hosts [", "  host HOST_ID",
          "  summary [", "  alerts [", "  model fgraph|stackdepot|vmap",
          "  gate [", "  help ["}) {
      EXPECT_TRUE(absl::StrContains(help.out, command)) << command;
    }
    EXPECT_TRUE(absl::StrContains(help.out, "  --server=127.0.0.1:7443\n"));
  }
  // Each command's own help: its usage line and its flags.
  const std::pair<const char*, std::vector<const char*>> commands[] = {
      {"predict",
       {"usage: tracehealthctl [flags] predict ", "  --probe\n",
        "  --threads=-1\n", "  --null_threads=-1\n", "  --batch=-1\n",
        "  --preempt\n", "  --kernel\n", "  --fgraph_active\n",
        "  --c_visit_ns=-1\n", "  --latency_budget=-1\n", "  --selector\n"}},
      {"plan",
       {"usage: tracehealthctl [flags] plan ", "  --max_latency=0\n",
        "  --wave_hosts=20\n", "  --threads=-1\n", "  --preempt\n",
        "  --selector\n", "  --limit=0\n"}},
      {"hosts",
       {"usage: tracehealthctl [flags] hosts ", "  --min_risk\n",
        "  --sort=risk\n"}},
      {"host", {"usage: tracehealthctl [flags] host HOST_ID"}},
      {"summary", {"usage: tracehealthctl [flags] summary ", "  --limit=0\n"}},
      {"alerts", {"usage: tracehealthctl [flags] alerts ", "  --state\n"}},
      {"model",
       {"usage: tracehealthctl [flags] model ", "  --cpus=-1\n",
        "  --show_stacks\n"}},
  };
  for (const auto& [command, wants] : commands) {
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{command, "--help"}, {"help", command}}) {
      CtlRun r = Ctl(dir, args);
      EXPECT_EQ(r.code, 0) << command << "\n" << r.out;
      for (const char* want : wants)
        EXPECT_TRUE(absl::StrContains(r.out, want)) << command << ": " << want;
    }
  }
  CtlRun unknown = Ctl(dir, {"help", "frobnicate"});
  EXPECT_EQ(unknown.code, 2);
  EXPECT_EQ(unknown.out,
            "tracehealthctl: unknown command \"frobnicate\" (predict, plan, "
            "hosts, host, summary, alerts, events, accuracy, model, gate, "
            "help; see tracehealthctl --help)\n");
}

// Flags a command cannot use are errors that list the values they take,
// before anything is sent; a failed call names its gRPC code.
TEST(TracehealthctlTest, BadFlagsAndFailedCallsSayWhat) {
  const std::string dir = NewTempDir("ctl-errors");
  auto sp = StartServer(dir);
  ASSERT_TRUE(sp.ok()) << sp.status();
  const std::string server = "--server=" + sp->grpc_addr;
  const std::pair<std::vector<std::string>, std::string> refused[] = {
      {{"predict", "--threads=-5"}, "tracehealthctl: --threads must be >= 0\n"},
      {{"predict", "--null_threads=-2"},
       "tracehealthctl: --null_threads must be >= 0\n"},
      {{"predict", "--batch=0"},
       "tracehealthctl: --batch must be in 1..1048576\n"},
      {{"predict", "--preempt=fast"},
       "tracehealthctl: --preempt: expected none|voluntary|full|lazy|rt, got "
       "'fast'\n"},
      {{"predict", "--fgraph_active=maybe"},
       "tracehealthctl: --fgraph_active: expected true|false, got 'maybe'\n"},
      {{"predict", "--probe=nonsense"},
       "tracehealthctl: --probe: unknown kind 'nonsense' (function_graph|"
       "function_profiler|graph_latency|kprobe_multi|kprobe_multi_return|"
       "kprobe_session|fprobe|fprobe_return|kretprobe|fentry)\n"},
      {{"hosts", "--sort=size"},
       "tracehealthctl: --sort: expected risk|host|last_seen|latency, got "
       "'size'\n"},
      {{"hosts", "--min_risk=high"},
       "tracehealthctl: --min_risk: expected none|latency|warning|stall, got "
       "'high'\n"},
      {{"alerts", "--state=open"},
       "tracehealthctl: --state: expected pending|firing|resolved, got "
       "'open'\n"},
      {{"summary", "extra"},
       "tracehealthctl: summary takes no argument (got \"extra\")\n"},
  };
  for (const auto& [args, message] : refused) {
    std::vector<std::string> argv = {server};
    argv.insert(argv.end(), args.begin(), args.end());
    CtlRun r = Ctl(dir, argv);
    EXPECT_EQ(r.code, 2) << args[1];
    EXPECT_EQ(r.out, message) << args[1];
  }
  CtlRun missing = Ctl(dir, {server, "host", "nope"});
  EXPECT_EQ(missing.code, 1);
  EXPECT_EQ(missing.out, "tracehealthctl: NOT_FOUND: unknown host \"nope\"\n");
  CtlRun bad_selector = Ctl(dir, {server, "hosts", "--selector=role==db"});
  EXPECT_EQ(bad_selector.code, 1);
  EXPECT_TRUE(absl::StartsWith(bad_selector.out,
                               "tracehealthctl: INVALID_ARGUMENT: selector: "))
      << bad_selector.out;
  ASSERT_TRUE(sp->process->Signal(SIGTERM).ok());
  EXPECT_EQ(*sp->process->Wait(absl::Seconds(30)), 0);
}

// A label value with a newline, a screen clear and a bell is stored as sent
// and printed escaped: no forged line, no control sequence reaches the
// terminal.
TEST(TracehealthctlTest, LabelValuesCannotForgeLinesOrClearTheScreen) {
  const std::string dir = NewTempDir("ctl-escape");
  auto sp = StartServer(dir);
  ASSERT_TRUE(sp.ok()) << sp.status();
  server::SampleHost clean;
  clean.host_id = "clean";
  clean.role = "db";
  server::SampleHost evil = clean;
  evil.host_id = "evil";
  evil.role = "db\nevil2        stall\x1b[2J\x1b[H\x07";
  SendReport(sp->grpc_addr, clean);
  SendReport(sp->grpc_addr, evil);
  const std::string server = "--server=" + sp->grpc_addr;
  CtlRun plain = Ctl(dir, {server, "host", "clean"});
  CtlRun shown = Ctl(dir, {server, "host", "evil"});
  ASSERT_EQ(plain.code, 0) << plain.out;
  ASSERT_EQ(shown.code, 0) << shown.out;
  EXPECT_TRUE(absl::StrContains(
      shown.out,
      "labels      rack=r1,role=db\\nevil2        stall\\x1b[2J\\x1b[H"
      "\\x07\n"))
      << shown.out;
  EXPECT_EQ(std::count(shown.out.begin(), shown.out.end(), '\n'),
            std::count(plain.out.begin(), plain.out.end(), '\n'));
  for (char c : shown.out) {
    const unsigned char u = static_cast<unsigned char>(c);
    ASSERT_TRUE(u == '\n' || u >= 0x20) << int{u};
  }
  ASSERT_TRUE(sp->process->Signal(SIGTERM).ok());
  EXPECT_EQ(*sp->process->Wait(absl::Seconds(30)), 0);
}

}  // namespace
}  // namespace tracehealth::testing
