#include "common/client_credentials.h"

#include "common/read_file.h"
#include "common/status.h"

namespace tracehealth {

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> ClientCredentials(
    const ClientTls& tls) {
  if (tls.ca_file.empty() && tls.cert_file.empty()) {
    return grpc::InsecureChannelCredentials();
  }
  grpc::SslCredentialsOptions ssl;
  if (!tls.ca_file.empty()) {
    absl::StatusOr<std::string> ca = ReadWholeFile(tls.ca_file);
    if (!ca.ok()) return Annotate(ca.status(), "--tls_ca");
    ssl.pem_root_certs = *std::move(ca);
  }
  if (!tls.cert_file.empty()) {
    if (tls.key_file.empty()) {
      return absl::InvalidArgumentError("--tls_cert needs --tls_key");
    }
    absl::StatusOr<std::string> cert = ReadWholeFile(tls.cert_file);
    if (!cert.ok()) return Annotate(cert.status(), "--tls_cert");
    absl::StatusOr<std::string> key = ReadWholeFile(tls.key_file);
    if (!key.ok()) return Annotate(key.status(), "--tls_key");
    ssl.pem_cert_chain = *std::move(cert);
    ssl.pem_private_key = *std::move(key);
  }
  return grpc::SslCredentials(ssl);
}

void ApplyServerName(const ClientTls& tls, grpc::ChannelArguments* args) {
  if (!tls.server_name.empty()) args->SetSslTargetNameOverride(tls.server_name);
}

}  // namespace tracehealth
