// Why a TCP address cannot be listened on, for start-up errors: gRPC's
// ServerBuilder only says that it could not bind.
//
// Thread safety: a plain function.
#ifndef TRACEHEALTH_SERVER_LISTEN_PROBE_H_
#define TRACEHEALTH_SERVER_LISTEN_PROBE_H_

#include <string>

namespace tracehealth::server {

// Binds and listens on a TCP socket at `host_port` ("127.0.0.1:7443",
// "[::1]:7443", "localhost:7443") without port sharing, then closes it.
// Returns the reason it failed ("127.0.0.1:7443: Address already in use",
// "no such host ..."), or "" when every address of it could be bound.
std::string ListenProbe(const std::string& host_port);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_LISTEN_PROBE_H_
