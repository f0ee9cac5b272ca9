#include "server/auth/server_credentials.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "grpcpp/security/server_credentials.h"

namespace tracehealth::server {
namespace {

absl::StatusOr<std::string> Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  std::stringstream ss;
  ss << in.rdbuf();
  if (ss.str().empty())
    return absl::InvalidArgumentError(absl::StrCat(path, ": empty"));
  return ss.str();
}

}  // namespace

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const std::string& cert_path, const std::string& key_path,
    const std::string& client_ca_path) {
  if (cert_path.empty() && key_path.empty()) {
    if (!client_ca_path.empty()) {
      return absl::InvalidArgumentError(
          "--tls_client_ca needs --tls_cert and --tls_key");
    }
    return grpc::InsecureServerCredentials();
  }
  if (cert_path.empty() || key_path.empty()) {
    return absl::InvalidArgumentError("--tls_cert and --tls_key go together");
  }
  absl::StatusOr<std::string> cert = Slurp(cert_path);
  if (!cert.ok()) return cert.status();
  absl::StatusOr<std::string> key = Slurp(key_path);
  if (!key.ok()) return key.status();
  grpc::SslServerCredentialsOptions opts(
      GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  opts.pem_key_cert_pairs.push_back({*key, *cert});
  if (!client_ca_path.empty()) {
    absl::StatusOr<std::string> ca = Slurp(client_ca_path);
    if (!ca.ok()) return ca.status();
    opts.pem_root_certs = *ca;
    opts.client_certificate_request =
        GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  return grpc::SslServerCredentials(opts);
}

}  // namespace tracehealth::server
