#include "common/client_credentials.h"

#include "gtest/gtest.h"

namespace tracehealth {
namespace {

TEST(ClientCredentialsTest, InsecureWithoutFiles) {
  auto c = ClientCredentials({});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_NE(*c, nullptr);
}

TEST(ClientCredentialsTest, UnreadableFilesNameTheFlag) {
  auto c = ClientCredentials({"/nonexistent/ca.pem", "", "", ""});
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(absl::IsNotFound(c.status())) << c.status();
  EXPECT_NE(c.status().message().find("--tls_ca"), std::string::npos);
  EXPECT_NE(c.status().message().find("/nonexistent/ca.pem"),
            std::string::npos);

  c = ClientCredentials(
      {"", "/nonexistent/cert.pem", "/nonexistent/key.pem", ""});
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("--tls_cert"), std::string::npos);
}

TEST(ClientCredentialsTest, CertificateWithoutKeyIsRefused) {
  auto c = ClientCredentials({"", "/etc/hostname", "", ""});
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(c.status())) << c.status();
}

}  // namespace
}  // namespace tracehealth
