// Which release a kernel's feature-table rows are asked about.
//
// Mainline and stable releases, and release candidates, are what their
// release string says. Debian and Ubuntu release strings name an ABI
// ("6.1.0-28-amd64", "6.8.0-45-generic"), not the stable release they are
// built from; the upstream version the agent reads from /proc/version
// ("Debian 6.1.119-1") or /proc/version_signature ("Ubuntu 6.8.0-45.45-generic
// 6.8.12") is, and the rows are asked about that. Other vendor kernels (RHEL
// "5.14.0-427.13.1.el9_4.x86_64", SUSE "5.14.21-150500.55.39-default") carry
// backports that make the mainline version meaningless: the rows are then
// a guess, and an override file (--feature_table) is the answer.
//
// Thread safety: pure functions.
#ifndef TRACEHEALTH_COMMON_KERNEL_VENDOR_RELEASE_H_
#define TRACEHEALTH_COMMON_KERNEL_VENDOR_RELEASE_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/kernel/release.h"

namespace tracehealth {

enum class ReleaseKind {
  kMainline,          // a mainline or stable release
  kReleaseCandidate,  // "-rcN": merge-window features, no stable backports
  kVendorUpstream,    // a vendor release, asked about its upstream version
  kVendorUnmapped,    // a vendor release without an upstream version
};

struct FeatureRelease {
  // What the rows are asked about.
  KernelRelease release;
  ReleaseKind kind = ReleaseKind::kMainline;
  // "Debian", "Ubuntu", "RHEL", "SUSE"; empty for mainline.
  std::string vendor;
};

// The vendor a release string and version string (/proc/sys/kernel/version,
// may be empty) name: "RHEL" for an ".elN" suffix, "SUSE" for "-default",
// "Ubuntu" or "Debian" when the version string says so or the suffix is
// Debian's ("-28-amd64", "-28-cloud-arm64"); empty otherwise (mainline,
// stable, and distributions that ship stable releases as they are).
std::string VendorOf(const KernelRelease& release, absl::string_view version);

// The release to ask the feature table about, for the running kernel's
// `release` string, its `version` string and the `upstream` version the
// agent found (empty: none). Errors: InvalidArgument when `release`, or a
// non-empty `upstream`, does not parse.
absl::StatusOr<FeatureRelease> ReleaseForFeatures(absl::string_view release,
                                                  absl::string_view version,
                                                  absl::string_view upstream);

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_KERNEL_VENDOR_RELEASE_H_
