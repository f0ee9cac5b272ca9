#include "tools/tracehealthctl/gate_command.h"

#include <chrono>
#include <cstdlib>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "agent/calibrate/host_pricing.h"
#include "agent/collect/collector.h"
#include "agent/gate/function_list.h"
#include "agent/gate/gate_check.h"
#include "agent/gate/unix_socket.h"
#include "common/grpc_code_name.h"
#include "common/procfs/host_fs.h"
#include "common/proto_json.h"
#include "common/proto_time.h"
#include "grpcpp/grpcpp.h"
#include "proto/tracehealth/v1/gate.grpc.pb.h"

namespace tracehealth {
namespace {

// The agent answers in milliseconds; a wedged one must not hold an attach.
constexpr auto kAgentDeadline = std::chrono::seconds(2);

v1::CheckRequest RequestOf(const GateArgs& args) {
  v1::CheckRequest r;
  r.set_probe_kind(args.probe);
  if (args.functions.has_value()) r.set_functions(*args.functions);
  if (args.filter.has_value()) r.set_filter(*args.filter);
  *r.mutable_max_latency() = ToProto(args.max_latency);
  return r;
}

std::string SocketPath(const GateArgs& args) {
  if (!args.socket.empty()) return args.socket;
  const char* env = std::getenv("TRACEHEALTH_GATE_SOCKET");
  return env != nullptr && *env != '\0' ? env : kDefaultGateSocket;
}

// What the agent said: the answer, a malformed request (INVALID_ARGUMENT),
// or no usable agent (anything else: the caller evaluates in-process).
struct AgentAnswer {
  std::optional<v1::CheckResponse> response;
  grpc::Status status;
};

AgentAnswer AskAgent(const std::string& path, const v1::CheckRequest& req) {
  AgentAnswer a;
  absl::StatusOr<agent::SocketAddress> addr = agent::SocketAddress::For(path);
  if (!addr.ok()) {
    a.status = grpc::Status(grpc::StatusCode::UNAVAILABLE,
                            std::string(addr.status().message()));
    return a;
  }
  auto stub = v1::Gate::NewStub(grpc::CreateChannel(
      addr->grpc_target(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + kAgentDeadline);
  v1::CheckResponse resp;
  a.status = stub->Check(&ctx, req, &resp);
  if (a.status.ok()) a.response = std::move(resp);
  return a;
}

v1::CheckResponse InProcess(const std::string& root,
                            const v1::CheckRequest& req, std::ostream& err) {
  HostFs fs(root);
  // The host is priced as its agent prices it: with the calibration in the
  // agent's default state directory (only read). Nothing else of the
  // agent's is read or written.
  std::string warning;
  const ModelOptions models = agent::HostModelOptions(agent::LoadHostPricing(
      fs, absl::StrCat(absl::StripSuffix(root, "/"), agent::kDefaultStateDir),
      &FeatureTable::Builtin(), &warning));
  if (!warning.empty()) err << "tracehealthctl gate: " << warning << "\n";
  agent::CollectorOptions copts;
  copts.features = models.features;
  agent::Collector collector(&fs, copts, [] { return absl::Now(); });
  const absl::Time read_at = absl::Now();
  const v1::HostSnapshot snapshot = collector.Collect();
  agent::FunctionCache functions(&fs);
  v1::CheckResponse out =
      agent::EvaluateCheck(req, snapshot, models, functions, std::nullopt);
  out.set_answered_by(absl::StrCat("in-process (root ", root, ")"));
  *out.mutable_read_at() = ToProto(read_at);
  return out;
}

int ExitCode(v1::AttachVerdict v) {
  switch (v) {
    case v1::ATTACH_VERDICT_SAFE:
      return kGateSafe;
    case v1::ATTACH_VERDICT_OVER_BUDGET:
    case v1::ATTACH_VERDICT_STALL_RISK:
      return kGateUnsafe;
    default:
      return kGateUnknown;
  }
}

int Print(const v1::CheckResponse& resp, bool json, std::ostream& out,
          std::ostream& err) {
  if (json) {
    ProtoJsonOptions opts;
    opts.pretty = true;
    absl::StatusOr<std::string> text = ProtoToJson(resp, opts);
    if (!text.ok()) {
      err << "tracehealthctl gate: " << text.status().message() << "\n";
      return kGateUnknown;
    }
    out << *text;
  } else {
    out << resp.reason() << " [" << resp.answered_by() << "]\n";
    for (const v1::Mitigation& m : resp.mitigations()) {
      err << "  mitigation: " << m.text() << "\n";
    }
  }
  return ExitCode(resp.verdict());
}

}  // namespace

bool IsGateCommand(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const absl::string_view a = argv[i];
    if (a.empty() || a[0] == '-') continue;
    return a == "gate";
  }
  return false;
}

int RunGateMain(int argc, char** argv, std::ostream& out, std::ostream& err) {
  std::vector<std::string> args(argv + 1, argv + argc);
  absl::StatusOr<GateArgs> parsed = ParseGateArgs(args);
  if (!parsed.ok()) {
    err << "tracehealthctl gate: " << parsed.status().message() << "\n";
    return kGateUsage;
  }
  if (parsed->help) {
    out << GateUsage();
    return kGateSafe;
  }
  return RunGate(*parsed, out, err);
}

int RunGate(const GateArgs& args, std::ostream& out, std::ostream& err) {
  const v1::CheckRequest req = RequestOf(args);
  // The checks the agent makes, before anything is read.
  absl::Status valid = agent::ValidateCheckRequest(req);
  if (!valid.ok()) {
    err << "tracehealthctl gate: " << valid.message() << "\n";
    return kGateUsage;
  }
  const bool ask_agent = !args.root.has_value() || !args.socket.empty();
  if (ask_agent) {
    const std::string path = SocketPath(args);
    AgentAnswer a = AskAgent(path, req);
    if (a.response.has_value()) return Print(*a.response, args.json, out, err);
    if (a.status.error_code() == grpc::StatusCode::INVALID_ARGUMENT) {
      err << "tracehealthctl gate: the agent refused the request: "
          << a.status.error_message() << "\n";
      return kGateUsage;
    }
    err << "tracehealthctl gate: no agent answered at unix:" << path << " ("
        << GrpcCodeName(a.status.error_code()) << ": "
        << a.status.error_message() << "); evaluating in-process\n";
  }
  return Print(InProcess(args.root.value_or("/"), req, err), args.json, out,
               err);
}

}  // namespace tracehealth
