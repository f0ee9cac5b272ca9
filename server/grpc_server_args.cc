#include "server/grpc_server_args.h"

#include "grpc/grpc.h"

namespace tracehealth::server {

std::map<std::string, int> GrpcServerArgs(const GrpcServerArgOptions& options) {
  std::map<std::string, int> args = {
      // gRPC shares ports (SO_REUSEPORT) by default: a second server would
      // bind the same port and take half of the agents' streams into its
      // own store.
      {GRPC_ARG_ALLOW_REUSEPORT, 0},
      // Connections of agents that vanished (powered off, cut off without
      // a FIN) hold a descriptor (and a stream slot, when they vanished
      // while sending) until a keepalive ping goes unanswered; connections
      // without a call (idle agents, query clients) close after 5 minutes.
      {GRPC_ARG_KEEPALIVE_TIME_MS, 2 * 60 * 1000},
      {GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 20 * 1000},
      {GRPC_ARG_MAX_CONNECTION_IDLE_MS, 5 * 60 * 1000},
      // Every agent holds a connection between its reports, so what gRPC
      // keeps per connection is kept per agent: one record for zerocopy
      // sends (off) instead of four (1.0 kB less), and no channelz socket
      // node (nothing serves channelz). Zero records would make gRPC take
      // the socket for one it could not allocate for, and agents behind
      // HAProxy then did not carry on after a primary failover
      // (tests/replicas/failover_test); a decoder HPACK table of 0 bytes
      // (0.5 kB less) broke streams through HAProxy at once.
      {GRPC_ARG_TCP_TX_ZEROCOPY_MAX_SIMULT_SENDS, 1},
      {GRPC_ARG_ENABLE_CHANNELZ, 0},
  };
  if (options.max_connection_age > absl::ZeroDuration()) {
    // gRPC core adds +-10% jitter to the age, so connections made together
    // do not all go away together.
    args[GRPC_ARG_MAX_CONNECTION_AGE_MS] =
        static_cast<int>(absl::ToInt64Milliseconds(options.max_connection_age));
    args[GRPC_ARG_MAX_CONNECTION_AGE_GRACE_MS] = static_cast<int>(
        absl::ToInt64Milliseconds(options.max_connection_age_grace));
  }
  for (const auto& [name, value] : options.overrides) args[name] = value;
  return args;
}

}  // namespace tracehealth::server
