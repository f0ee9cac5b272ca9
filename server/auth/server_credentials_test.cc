#include "server/auth/server_credentials.h"

#include <cstdlib>
#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace tracehealth::server {
namespace {

std::string TempFile(const std::string& name, const std::string& content) {
  const char* base = getenv("TEST_TMPDIR");
  std::string path = std::string(base != nullptr ? base : "/tmp") + "/" + name;
  std::ofstream(path) << content;
  return path;
}

TEST(ServerCredentialsTest, NoFilesIsInsecure) {
  EXPECT_TRUE(MakeServerCredentials("", "", "").ok());
}

TEST(ServerCredentialsTest, MissingFileIsNotFoundNamingIt) {
  const std::string key = TempFile("missing.key", "");
  const std::string cert = key + ".absent";
  auto creds = MakeServerCredentials(cert, key, "");
  EXPECT_TRUE(absl::IsNotFound(creds.status())) << creds.status();
  EXPECT_NE(creds.status().message().find(cert), absl::string_view::npos)
      << creds.status();
}

TEST(ServerCredentialsTest, EmptyFileIsNoPemNamingTheFlag) {
  const std::string cert = TempFile("empty.pem", "");
  const std::string key = TempFile("empty.key", "");
  auto creds = MakeServerCredentials(cert, key, "");
  EXPECT_EQ(creds.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(creds.status().message(),
            "--tls_cert " + cert + ": no PEM certificate");
}

}  // namespace
}  // namespace tracehealth::server
