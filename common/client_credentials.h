// gRPC channel credentials for the project's clients (the agent,
// tracehealthctl, tracehealth-loadgen), from the same four flags each of
// them takes.
#ifndef TRACEHEALTH_COMMON_CLIENT_CREDENTIALS_H_
#define TRACEHEALTH_COMMON_CLIENT_CREDENTIALS_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"

namespace tracehealth {

struct ClientTls {
  std::string ca_file;    // --tls_ca: PEM CA of the server certificate
  std::string cert_file;  // --tls_cert: PEM client certificate (mTLS)
  std::string key_file;   // --tls_key: its PEM key
  std::string
      server_name;  // --tls_server_name: expected name, if not the address
};

// Insecure credentials when neither ca_file nor cert_file is set; otherwise
// TLS, verifying the server against ca_file (the system roots when empty)
// and presenting cert_file/key_file when set. Errors (unreadable file, a
// certificate without its key) name the flag.
absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> ClientCredentials(
    const ClientTls& tls);

// Sets the TLS target-name override on `args` when server_name is set.
void ApplyServerName(const ClientTls& tls, grpc::ChannelArguments* args);

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_CLIENT_CREDENTIALS_H_
