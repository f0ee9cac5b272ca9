// gRPC server credentials from the TLS flags.
#ifndef TRACEHEALTH_SERVER_AUTH_SERVER_CREDENTIALS_H_
#define TRACEHEALTH_SERVER_AUTH_SERVER_CREDENTIALS_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "grpcpp/security/server_credentials.h"

namespace tracehealth::server {

// No cert/key: insecure credentials (loopback, tests). cert + key: TLS.
// cert + key + client CA: mutual TLS; a client must present a certificate
// signed by the CA (the handshake fails otherwise).
// Errors: unreadable files (with the path), cert without key or vice versa,
// a client CA without cert/key, a file without a PEM certificate or key, a
// key that is not the certificate's (InvalidArgument, naming the flag and
// the file).
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const std::string& cert_path, const std::string& key_path,
    const std::string& client_ca_path);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_AUTH_SERVER_CREDENTIALS_H_
