#include "common/kernel/vendor_release.h"

#include "gtest/gtest.h"

namespace tracehealth {
namespace {

// Release strings as the kernels print them: Debian's "uname -r" names the
// ABI (6.1.0-28), its "uname -v" the upstream stable release ("Debian
// 6.1.119-1"); Ubuntu's /proc/version_signature ends with the upstream
// stable release ("Ubuntu 6.8.0-45.45-generic 6.8.12"); RHEL 9.4 is
// "5.14.0-427.13.1.el9_4.x86_64".
constexpr char kDebianVersion[] =
    "#1 SMP PREEMPT_DYNAMIC Debian 6.1.119-1 (2024-11-22)";
constexpr char kUbuntuVersion[] =
    "#45-Ubuntu SMP PREEMPT_DYNAMIC Fri Aug 30 12:02:04 UTC 2024";

TEST(VendorReleaseTest, NamesTheVendor) {
  auto vendor = [](const char* release, const char* version) {
    return VendorOf(*ParseKernelRelease(release), version);
  };
  EXPECT_EQ(vendor("6.1.0-28-amd64", kDebianVersion), "Debian");
  // Debian's suffix alone, without the version string.
  EXPECT_EQ(vendor("6.1.0-28-cloud-arm64", ""), "Debian");
  EXPECT_EQ(vendor("6.8.0-45-generic", kUbuntuVersion), "Ubuntu");
  EXPECT_EQ(vendor("5.14.0-427.13.1.el9_4.x86_64", "#1 SMP PREEMPT_DYNAMIC"),
            "RHEL");
  EXPECT_EQ(vendor("5.14.21-150500.55.39-default", ""), "SUSE");
  // Mainline, stable, and suffixes that only look alike.
  EXPECT_EQ(vendor("6.18.44-fc-v669", "#1 SMP PREEMPT_DYNAMIC"), "");
  EXPECT_EQ(vendor("7.1.5", ""), "");
  EXPECT_EQ(vendor("6.8.9-300.fc40.x86_64", ""), "");
  EXPECT_EQ(vendor("6.1.0-rc5-amd", ""), "");  // not -<abi>-<arch>
  EXPECT_EQ(vendor("6.6.0-elx", ""), "");      // ".el" without a digit
}

TEST(VendorReleaseTest, DebianAndUbuntuAreAskedAboutTheirUpstreamRelease) {
  absl::StatusOr<FeatureRelease> r =
      ReleaseForFeatures("6.1.0-28-amd64", kDebianVersion, "6.1.119");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->kind, ReleaseKind::kVendorUpstream);
  EXPECT_EQ(r->vendor, "Debian");
  EXPECT_EQ(r->release.Version(), "6.1.119");
  r = ReleaseForFeatures("6.8.0-45-generic", kUbuntuVersion, "6.8.12");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->release.Version(), "6.8.12");
  EXPECT_EQ(r->vendor, "Ubuntu");
  // Without the upstream version a Debian ABI release is not mainline.
  r = ReleaseForFeatures("6.1.0-28-amd64", kDebianVersion, "");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->kind, ReleaseKind::kVendorUnmapped);
  EXPECT_EQ(r->release.Version(), "6.1.0");
}

TEST(VendorReleaseTest, RhelIsUnmappedMainlineIsMainline) {
  absl::StatusOr<FeatureRelease> r =
      ReleaseForFeatures("5.14.0-427.13.1.el9_4.x86_64", "#1 SMP", "");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->kind, ReleaseKind::kVendorUnmapped);
  EXPECT_EQ(r->vendor, "RHEL");
  r = ReleaseForFeatures("6.18.44-fc-v669", "#1 SMP PREEMPT_DYNAMIC", "");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->kind, ReleaseKind::kMainline);
  EXPECT_EQ(r->vendor, "");
}

TEST(VendorReleaseTest, ReleaseCandidates) {
  // "Not tainted 6.10.0-rc5 #95": an rc, whatever else is known.
  absl::StatusOr<FeatureRelease> r =
      ReleaseForFeatures("6.10.0-rc5", "#95 SMP PREEMPT_DYNAMIC", "");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->kind, ReleaseKind::kReleaseCandidate);
  EXPECT_EQ(r->release.Version(), "6.10.0");
  r = ReleaseForFeatures("6.19-rc3", "", "");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->kind, ReleaseKind::kReleaseCandidate);
}

TEST(VendorReleaseTest, BadStringsAreErrors) {
  EXPECT_FALSE(ReleaseForFeatures("", "", "").ok());
  EXPECT_FALSE(ReleaseForFeatures("banana", "", "").ok());
  absl::StatusOr<FeatureRelease> r =
      ReleaseForFeatures("6.1.0-28-amd64", kDebianVersion, "6.x");
  EXPECT_TRUE(absl::IsInvalidArgument(r.status()));
  EXPECT_NE(r.status().message().find("upstream version"), std::string::npos);
}

}  // namespace
}  // namespace tracehealth
