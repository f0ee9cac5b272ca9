// The FleetQuery commands of tracehealthctl: predict, plan, hosts, host,
// summary, alerts, events. Each takes its flags' values from Options (the
// flags are defined by tracehealthctl's main), calls the server, and prints a
// table (cells escaped: table.h) or, with --json, the response as protobuf
// JSON.
//
// Exit codes: 0 on success; 1 when the call failed (the gRPC code's name
// and the server's message, escaped, on `err`); 2 for a flag the command
// cannot use (what is wrong and the values it takes, on `err`).
//
// Thread safety: one command at a time, from one thread.
#ifndef TRACEHEALTH_TOOLS_TRACEHEALTHCTL_FLEET_COMMANDS_H_
#define TRACEHEALTH_TOOLS_TRACEHEALTHCTL_FLEET_COMMANDS_H_

#include <memory>
#include <ostream>
#include <string>

#include "absl/time/time.h"
#include "proto/tracehealth/v1/query.grpc.pb.h"
#include "tools/tracehealthctl/model_request.h"
#include "tools/tracehealthctl/plan_command.h"

namespace tracehealth {

inline constexpr int kUsageError = 2;

class FleetCommands {
 public:
  struct Options {
    std::string token;  // bearer token; empty: none
    bool json = false;
    absl::Duration timeout = absl::Seconds(30);
    // The commands' flags (--help of each names those it reads).
    std::string hosts;     // comma-separated host ids
    std::string selector;  // label selector
    std::string min_risk;  // "" : every host
    std::string sort = "risk";
    int32_t limit = 0;  // 0: the server's default
    std::string state;
    std::string predicted;
    absl::Duration since = absl::Hours(24 * 7);
    PlanFlags plan;
    ModelFlags model;  // --probe and the what-if flags
  };

  FleetCommands(std::unique_ptr<v1::FleetQuery::Stub> stub, Options options,
                std::ostream& out, std::ostream& err)
      : stub_(std::move(stub)),
        options_(std::move(options)),
        out_(out),
        err_(err) {}

  int Predict();
  int Plan();  // plan_command.h
  int Hosts();
  int Host(const std::string& id);
  int Summary();
  int Alerts();
  // `host` empty: every host.
  int Events(const std::string& host);
  int Accuracy();

 private:
  // -1 when the caller prints `resp` as a table; else the exit code (the
  // error printed, or the JSON of `resp` with --json).
  template <typename Req, typename Resp>
  int Call(grpc::Status (v1::FleetQuery::Stub::*rpc)(grpc::ClientContext*,
                                                     const Req&, Resp*),
           const Req& req, Resp* resp);
  int Usage(const std::string& message);
  int PrintJson(const google::protobuf::Message& m);
  void PrintSummaries(
      const google::protobuf::RepeatedPtrField<v1::HostSummary>& hosts);

  std::unique_ptr<v1::FleetQuery::Stub> stub_;
  const Options options_;
  std::ostream& out_;
  std::ostream& err_;
};

}  // namespace tracehealth

#endif  // TRACEHEALTH_TOOLS_TRACEHEALTHCTL_FLEET_COMMANDS_H_
