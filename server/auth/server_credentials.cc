#include "server/auth/server_credentials.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "absl/strings/str_cat.h"
#include "common/read_file.h"
#include "grpcpp/security/server_credentials.h"

namespace tracehealth::server {
namespace {

// gRPC accepts any bytes here and fails only when the port is bound, as
// "cannot listen": the PEM is checked first, so that the error names the
// file and what is wrong with it.
absl::Status CheckKeyPair(const std::string& cert_pem,
                          const std::string& cert_path,
                          const std::string& key_pem,
                          const std::string& key_path) {
  BIO* cert_bio =
      BIO_new_mem_buf(cert_pem.data(), static_cast<int>(cert_pem.size()));
  X509* cert = PEM_read_bio_X509(cert_bio, nullptr, nullptr, nullptr);
  BIO_free(cert_bio);
  BIO* key_bio =
      BIO_new_mem_buf(key_pem.data(), static_cast<int>(key_pem.size()));
  EVP_PKEY* key = PEM_read_bio_PrivateKey(key_bio, nullptr, nullptr, nullptr);
  BIO_free(key_bio);
  absl::Status st;
  if (cert == nullptr) {
    st = absl::InvalidArgumentError(
        absl::StrCat("--tls_cert ", cert_path, ": no PEM certificate"));
  } else if (key == nullptr) {
    st = absl::InvalidArgumentError(absl::StrCat(
        "--tls_key ", key_path,
        ": no PEM private key (or one protected by a passphrase)"));
  } else if (X509_check_private_key(cert, key) != 1) {
    st = absl::InvalidArgumentError(absl::StrCat(
        "--tls_key ", key_path, " is not the key of --tls_cert ", cert_path));
  }
  X509_free(cert);
  EVP_PKEY_free(key);
  ERR_clear_error();
  return st;
}

absl::Status CheckCa(const std::string& pem, const std::string& path) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  X509* ca = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  X509_free(ca);
  ERR_clear_error();
  if (ca == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("--tls_client_ca ", path, ": no PEM certificate"));
  }
  return absl::OkStatus();
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
  absl::StatusOr<std::string> cert = ReadWholeFile(cert_path);
  if (!cert.ok()) return cert.status();
  absl::StatusOr<std::string> key = ReadWholeFile(key_path);
  if (!key.ok()) return key.status();
  if (absl::Status st = CheckKeyPair(*cert, cert_path, *key, key_path);
      !st.ok()) {
    return st;
  }
  grpc::SslServerCredentialsOptions opts(
      GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  opts.pem_key_cert_pairs.push_back({*key, *cert});
  if (!client_ca_path.empty()) {
    absl::StatusOr<std::string> ca = ReadWholeFile(client_ca_path);
    if (!ca.ok()) return ca.status();
    if (absl::Status st = CheckCa(*ca, client_ca_path); !st.ok()) return st;
    opts.pem_root_certs = *ca;
    opts.client_certificate_request =
        GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  return grpc::SslServerCredentials(opts);
}

}  // namespace tracehealth::server
