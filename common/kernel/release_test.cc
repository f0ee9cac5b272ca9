#include "common/kernel/release.h"

#include "gtest/gtest.h"

namespace tracehealth {
namespace {

struct Case {
  const char* text;
  int major, minor, patch;
  const char* suffix;
};

class ReleaseParseTest : public ::testing::TestWithParam<Case> {};

TEST_P(ReleaseParseTest, ParsesRealReleaseStrings) {
  const Case& c = GetParam();
  absl::StatusOr<KernelRelease> r = ParseKernelRelease(c.text);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->major, c.major);
  EXPECT_EQ(r->minor, c.minor);
  EXPECT_EQ(r->patch, c.patch);
  EXPECT_EQ(r->suffix, c.suffix);
  EXPECT_EQ(r->ToString(), c.text);
}

INSTANTIATE_TEST_SUITE_P(
    RealStrings, ReleaseParseTest,
    ::testing::Values(Case{"6.1.0-57-cloud-amd64", 6, 1, 0, "-57-cloud-amd64"},
                      Case{"6.18.44-fc-v669", 6, 18, 44, "-fc-v669"},
                      Case{"6.14.0-1012-aws", 6, 14, 0, "-1012-aws"},
                      Case{"7.1.5", 7, 1, 5, ""},
                      Case{"5.14.0-427.13.1.el9_4.x86_64", 5, 14, 0,
                           "-427.13.1.el9_4.x86_64"},
                      Case{"6.8.0-1015-gcp", 6, 8, 0, "-1015-gcp"},
                      Case{"6.19", 6, 19, 0, ""},
                      Case{"6.19-rc3", 6, 19, 0, "-rc3"},
                      Case{"6.12.5+deb13-amd64", 6, 12, 5, "+deb13-amd64"},
                      Case{"4.19.0_custom", 4, 19, 0, "_custom"}));

TEST(ReleaseParseTest, StripsWhitespaceAndNewline) {
  absl::StatusOr<KernelRelease> r = ParseKernelRelease("6.16.0\n");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->Version(), "6.16.0");
}

TEST(ReleaseParseTest, RejectsGarbage) {
  for (const char* bad :
       {"", "   ", "linux", "6", "6.", ".6.1", "6.x", "v6.1.0", "6.1.0 extra",
        "1.2.3", "100.1", "6.123456", "6.1.0\x01", "6.1a", "-6.1"}) {
    absl::StatusOr<KernelRelease> r = ParseKernelRelease(bad);
    EXPECT_FALSE(r.ok()) << "accepted \"" << bad << "\"";
    if (!r.ok()) {
      EXPECT_TRUE(absl::IsInvalidArgument(r.status()));
      EXPECT_NE(r.status().message().find("kernel release"), std::string::npos);
    }
  }
}

TEST(ReleaseCompareTest, OrdersByNumbersOnly) {
  auto v = [](const char* s) { return *ParseKernelRelease(s); };
  EXPECT_TRUE(v("6.18.2") < v("6.18.35"));
  EXPECT_TRUE(v("6.9.0") < v("6.10.0"));
  EXPECT_TRUE(v("6.19") >= v("6.19.0-rc1"));
  EXPECT_FALSE(v("7.1.5") < v("6.19.9"));
  EXPECT_TRUE(v("6.18.44-fc").SameBranch(v("6.18.2")));
  EXPECT_FALSE(v("6.18.44").SameBranch(v("6.19.0")));
}

TEST(ReleaseTest, ReleaseCandidates) {
  EXPECT_TRUE(ParseKernelRelease("6.10.0-rc5")->IsReleaseCandidate());
  EXPECT_TRUE(ParseKernelRelease("6.19-rc3")->IsReleaseCandidate());
  EXPECT_TRUE(ParseKernelRelease("7.0-rc1+")->IsReleaseCandidate());
  EXPECT_FALSE(ParseKernelRelease("6.10.5")->IsReleaseCandidate());
  EXPECT_FALSE(ParseKernelRelease("6.1.0-28-amd64")->IsReleaseCandidate());
  EXPECT_FALSE(ParseKernelRelease("6.10-rcx")->IsReleaseCandidate());
  EXPECT_FALSE(ParseKernelRelease("6.10-rc")->IsReleaseCandidate());
}

}  // namespace
}  // namespace tracehealth
