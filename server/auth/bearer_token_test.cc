#include "server/auth/bearer_token.h"

#include "gtest/gtest.h"

namespace tracehealth::server {
namespace {

TEST(BearerTokenTest, OnlyTheExactHeaderMatches) {
  EXPECT_TRUE(BearerTokenMatches("Bearer s3cret", "s3cret"));
  EXPECT_FALSE(BearerTokenMatches("", "s3cret"));
  EXPECT_FALSE(BearerTokenMatches("s3cret", "s3cret"));
  EXPECT_FALSE(BearerTokenMatches("Bearer s3cre", "s3cret"));    // prefix
  EXPECT_FALSE(BearerTokenMatches("Bearer s3cretX", "s3cret"));  // longer
  EXPECT_FALSE(BearerTokenMatches("Bearer S3cret", "s3cret"));   // case
  EXPECT_FALSE(BearerTokenMatches("bearer s3cret", "s3cret"));
  EXPECT_FALSE(
      BearerTokenMatches(std::string_view("Bearer s3cret\0", 14), "s3cret"));
}

}  // namespace
}  // namespace tracehealth::server
