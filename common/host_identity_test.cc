#include "common/host_identity.h"

#include <string>

#include "gtest/gtest.h"

namespace tracehealth {
namespace {

TEST(HostIdentityTest, HostIdLengthBounds) {
  EXPECT_FALSE(IsValidHostId(""));
  EXPECT_TRUE(IsValidHostId("a"));
  EXPECT_TRUE(IsValidHostId(std::string(253, 'x')));
  EXPECT_FALSE(IsValidHostId(std::string(254, 'x')));
}

TEST(HostIdentityTest, HostIdOfDotsOnlyNamesNoHost) {
  EXPECT_FALSE(IsValidHostId("."));
  EXPECT_FALSE(IsValidHostId(".."));
  EXPECT_FALSE(IsValidHostId("..."));
  EXPECT_FALSE(IsValidHostId(std::string(253, '.')));
  EXPECT_TRUE(IsValidHostId(".a"));
  EXPECT_TRUE(IsValidHostId("a."));
  EXPECT_TRUE(IsValidHostId("..a"));
}

TEST(HostIdentityTest, HostIdCharacters) {
  EXPECT_TRUE(IsValidHostId("db.example.com"));
  EXPECT_TRUE(IsValidHostId("Web_7-eu.1"));
  EXPECT_TRUE(IsValidHostId("ABCXYZabcxyz0189"));
  EXPECT_TRUE(IsValidHostId("-"));
  EXPECT_TRUE(IsValidHostId("_"));
  for (const char* bad : {"a b", "a/b", "a\\b", "a:b", "a@b", "a+b", "a\tb",
                          "a\nb", "h\xc3\xa9"}) {
    EXPECT_FALSE(IsValidHostId(bad)) << bad;
  }
  EXPECT_FALSE(IsValidHostId(std::string("a\0b", 3)));
}

TEST(HostIdentityTest, LabelKeys) {
  EXPECT_TRUE(IsValidLabelKey("rack"));
  EXPECT_TRUE(IsValidLabelKey("_x"));
  EXPECT_TRUE(IsValidLabelKey("Zone_2"));
  EXPECT_FALSE(IsValidLabelKey(""));
  EXPECT_FALSE(IsValidLabelKey("2zone"));
  EXPECT_FALSE(IsValidLabelKey("a-b"));
  EXPECT_FALSE(IsValidLabelKey("a.b"));
  EXPECT_FALSE(IsValidLabelKey("a b"));
}

}  // namespace
}  // namespace tracehealth
