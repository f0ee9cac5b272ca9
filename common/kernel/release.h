// Kernel release strings, as in /proc/sys/kernel/osrelease or `uname -r`.
//
// A release is "MAJOR.MINOR[.PATCH][SUFFIX]": "6.1.0-57-cloud-amd64",
// "6.18.44-fc-v669", "7.1.5", "5.14.0-427.13.1.el9_4.x86_64", "6.19-rc3".
// The suffix (everything after the numeric part, starting with '-', '+', '_'
// or '.' followed by a non-digit) is kept verbatim; distribution suffixes say
// nothing reliable about backports, which the feature table handles.
#ifndef TRACEHEALTH_COMMON_KERNEL_RELEASE_H_
#define TRACEHEALTH_COMMON_KERNEL_RELEASE_H_

#include <string>
#include <tuple>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tracehealth {

struct KernelRelease {
  int major = 0;
  int minor = 0;
  int patch = 0;
  // True when the string had an explicit ".PATCH" component.
  bool has_patch = false;
  std::string suffix;

  // "6.18.44" (no suffix).
  std::string Version() const;
  // The full string again: Version() + suffix ("6.19" stays "6.19").
  std::string ToString() const;

  // Orders by (major, minor, patch) only; suffixes do not order.
  friend bool operator<(const KernelRelease& a, const KernelRelease& b) {
    return std::tie(a.major, a.minor, a.patch) <
           std::tie(b.major, b.minor, b.patch);
  }
  friend bool operator>=(const KernelRelease& a, const KernelRelease& b) {
    return !(a < b);
  }
  // A mainline release candidate: the suffix is "-rc" and a number
  // ("6.10.0-rc5", "6.19-rc3"). It has what the release's merge window
  // merged, and no stable backport.
  bool IsReleaseCandidate() const;
  // Same (major, minor) stable branch.
  bool SameBranch(const KernelRelease& o) const {
    return major == o.major && minor == o.minor;
  }
};

// Parses a release string. Leading/trailing whitespace is ignored.
// Errors (InvalidArgument, naming the input): empty string, no "MAJOR.MINOR"
// numeric prefix, numbers out of range (major 2..99, minor/patch 0..9999),
// a suffix that does not start with a separator, or control characters.
absl::StatusOr<KernelRelease> ParseKernelRelease(absl::string_view text);

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_KERNEL_RELEASE_H_
