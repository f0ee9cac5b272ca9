// tracehealthctl: command-line client of the FleetQuery API, plus offline
// model evaluation (usage.cc lists the commands; `tracehealthctl --help`).
//
// Reads the connection flags, answers --help and `help`, and runs a command:
// the FleetQuery ones in fleet_commands.cc, `model` in model_command.cc.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "common/client_credentials.h"
#include "common/escape.h"
#include "common/flag_help.h"
#include "common/read_file.h"
#include "grpcpp/grpcpp.h"
#include "tools/tracehealthctl/flags.h"
#include "tools/tracehealthctl/fleet_commands.h"
#include "tools/tracehealthctl/gate_command.h"
#include "tools/tracehealthctl/model_command.h"
#include "tools/tracehealthctl/usage.h"

ABSL_FLAG(std::string, server, "127.0.0.1:7443",
          "tracehealth-server gRPC address");
ABSL_FLAG(bool, json, false, "Print protobuf JSON instead of tables");
ABSL_FLAG(std::string, token_file, "", "File with the query API bearer token");
ABSL_FLAG(std::string, tls_ca, "",
          "PEM CA of the server certificate (enables TLS)");
ABSL_FLAG(std::string, tls_cert, "", "PEM client certificate (mTLS)");
ABSL_FLAG(std::string, tls_key, "", "PEM client key (mTLS)");
ABSL_FLAG(std::string, tls_server_name, "",
          "Expected server name, when not the address");
ABSL_FLAG(double, timeout, 30, "RPC deadline in seconds");

namespace tracehealth {
namespace {

int UnknownCommand(const std::string& cmd) {
  std::cerr << "tracehealthctl: unknown command \"" << EscapeText(cmd) << "\" ("
            << absl::StrJoin(CtlCommands(), ", ")
            << "; see tracehealthctl --help)\n";
  return kUsageError;
}

// `tracehealthctl --help`, `CMD --help`, `help` and `help CMD`.
int Help(const std::string& cmd) {
  if (cmd.empty()) {
    std::cout << CtlHelp();
    return 0;
  }
  std::optional<std::string> help = CtlCommandHelp(cmd);
  if (!help.has_value()) return UnknownCommand(cmd);
  std::cout << *help;
  return 0;
}

int RunFleetCommand(const std::string& cmd,
                    const std::vector<std::string>& args) {
  FleetCommands::Options options;
  if (absl::Status st = FleetFlagsFromCommandLine(&options); !st.ok()) {
    std::cerr << "tracehealthctl: " << st.message() << "\n";
    return kUsageError;
  }
  options.json = absl::GetFlag(FLAGS_json);
  options.timeout = absl::Seconds(absl::GetFlag(FLAGS_timeout));
  const std::string token_file = absl::GetFlag(FLAGS_token_file);
  if (!token_file.empty()) {
    absl::StatusOr<std::string> text = ReadWholeFile(token_file);
    options.token =
        text.ok() ? std::string(absl::StripAsciiWhitespace(*text)) : "";
    if (options.token.empty()) {
      std::cerr << "tracehealthctl: --token_file: no token in " << token_file
                << "\n";
      return kUsageError;
    }
  }
  ClientTls tls;
  tls.ca_file = absl::GetFlag(FLAGS_tls_ca);
  tls.cert_file = absl::GetFlag(FLAGS_tls_cert);
  tls.key_file = absl::GetFlag(FLAGS_tls_key);
  tls.server_name = absl::GetFlag(FLAGS_tls_server_name);
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> creds =
      ClientCredentials(tls);
  if (!creds.ok()) {
    std::cerr << "tracehealthctl: " << creds.status().message() << "\n";
    return kUsageError;
  }
  grpc::ChannelArguments channel_args;
  ApplyServerName(tls, &channel_args);
  FleetCommands ctl(v1::FleetQuery::NewStub(grpc::CreateCustomChannel(
                        absl::GetFlag(FLAGS_server), *creds, channel_args)),
                    options, std::cout, std::cerr);
  if (cmd == "host") {
    if (args.size() != 1) {
      std::cerr << "usage: tracehealthctl host HOST_ID\n";
      return kUsageError;
    }
    return ctl.Host(args[0]);
  }
  if (cmd == "events") {
    if (args.size() > 1) {
      std::cerr << "usage: tracehealthctl events [HOST_ID]\n";
      return kUsageError;
    }
    return ctl.Events(args.empty() ? "" : args[0]);
  }
  if (!args.empty()) {
    std::cerr << "tracehealthctl: " << cmd << " takes no argument (got \""
              << EscapeText(args[0]) << "\")\n";
    return kUsageError;
  }
  if (cmd == "predict") return ctl.Predict();
  if (cmd == "plan") return ctl.Plan();
  if (cmd == "hosts") return ctl.Hosts();
  if (cmd == "summary") return ctl.Summary();
  if (cmd == "alerts") return ctl.Alerts();
  if (cmd == "accuracy") return ctl.Accuracy();
  return UnknownCommand(cmd);
}

int Run(bool help, const std::vector<std::string>& positional) {
  const std::string cmd = positional.empty() ? "" : positional[0];
  const std::vector<std::string> args(
      positional.begin() + (positional.empty() ? 0 : 1), positional.end());
  if (help) return Help(cmd == "help" && !args.empty() ? args[0] : cmd);
  if (cmd == "help") return Help(args.empty() ? "" : args[0]);
  if (cmd.empty()) {
    std::cerr << CtlHelp();
    return kUsageError;
  }
  if (cmd == "model") {
    absl::StatusOr<ModelFlags> flags = ModelFlagsFromCommandLine();
    if (!flags.ok()) {
      std::cerr << "tracehealthctl: model: " << flags.status().message()
                << "\n";
      return kUsageError;
    }
    return RunModelCommand(args, absl::GetFlag(FLAGS_json), *flags, std::cout,
                           std::cerr);
  }
  return RunFleetCommand(cmd, args);
}

}  // namespace
}  // namespace tracehealth

int main(int argc, char** argv) {
  // The gate parses its own flags: its usage errors exit 3, not absl's 1.
  if (tracehealth::IsGateCommand(argc, argv)) {
    return tracehealth::RunGateMain(argc, argv, std::cout, std::cerr);
  }
  absl::SetProgramUsageMessage(
      "tracehealthctl [flags] predict|plan|hosts|host ID|summary|alerts|"
      "events [ID]|model KIND|gate|help (see tracehealthctl --help)");
  const bool help = tracehealth::WantsHelp(argc, argv);
  std::vector<char*> rest = tracehealth::WithoutHelp(argc, argv);
  // Bare true|false model flags get their value (absl wants one for a text
  // flag).
  std::vector<std::string> args = tracehealth::WithBooleanValues(
      std::vector<std::string>(rest.begin() + 1, rest.end()));
  std::vector<char*> argv2 = {rest[0]};
  for (std::string& a : args) argv2.push_back(a.data());
  std::vector<char*> parsed =
      absl::ParseCommandLine(static_cast<int>(argv2.size()), argv2.data());
  const std::vector<std::string> positional(parsed.begin() + 1, parsed.end());
  return tracehealth::Run(help, positional);
}
