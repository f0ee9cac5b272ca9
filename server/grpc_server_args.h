// The gRPC channel arguments the server listens with: its defaults (port
// not shared, keepalive, idle and age limits, and what gRPC would keep per
// connection without need), with --grpc_args applied on top.
//
// Each name appears once in the result, so an argument given with
// --grpc_args replaces the default of the same name whatever order gRPC
// would read duplicates in.
#ifndef TRACEHEALTH_SERVER_GRPC_SERVER_ARGS_H_
#define TRACEHEALTH_SERVER_GRPC_SERVER_ARGS_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"

namespace tracehealth::server {

struct GrpcServerArgOptions {
  // Zero: connections have no age limit.
  absl::Duration max_connection_age = absl::ZeroDuration();
  absl::Duration max_connection_age_grace = absl::ZeroDuration();
  // --grpc_args, in order; a later one of the same name wins.
  std::vector<std::pair<std::string, int>> overrides;
};

// Name -> integer value, for grpc::ServerBuilder::AddChannelArgument.
std::map<std::string, int> GrpcServerArgs(const GrpcServerArgOptions& options);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_GRPC_SERVER_ARGS_H_
