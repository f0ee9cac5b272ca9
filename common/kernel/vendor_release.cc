#include "common/kernel/vendor_release.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace tracehealth {
namespace {

// ".el9_4", ".el8": RHEL and its rebuilds (CentOS Stream, Rocky, Alma).
bool HasElSuffix(absl::string_view suffix) {
  for (size_t i = suffix.find(".el"); i != absl::string_view::npos;
       i = suffix.find(".el", i + 1)) {
    if (i + 3 < suffix.size() && absl::ascii_isdigit(suffix[i + 3])) {
      return true;
    }
  }
  return false;
}

// Debian's "-<abi>-<flavour>" where the flavour ends in an architecture:
// "-28-amd64", "-28-cloud-amd64", "-28-rt-arm64".
bool HasDebianSuffix(absl::string_view suffix) {
  if (suffix.size() < 3 || suffix[0] != '-' || !absl::ascii_isdigit(suffix[1]))
    return false;
  size_t i = 1;
  while (i < suffix.size() && absl::ascii_isdigit(suffix[i])) ++i;
  if (i >= suffix.size() || suffix[i] != '-') return false;
  for (absl::string_view arch : {"amd64", "arm64", "armmp", "686-pae",
                                 "ppc64el", "s390x", "riscv64", "loong64"}) {
    if (absl::EndsWith(suffix, arch)) return true;
  }
  return false;
}

}  // namespace

std::string VendorOf(const KernelRelease& release, absl::string_view version) {
  const absl::string_view suffix = release.suffix;
  if (HasElSuffix(suffix)) return "RHEL";
  if (absl::EndsWith(suffix, "-default")) return "SUSE";
  if (absl::StrContains(version, "Ubuntu")) return "Ubuntu";
  if (absl::StrContains(version, "Debian") || HasDebianSuffix(suffix))
    return "Debian";
  return "";
}

absl::StatusOr<FeatureRelease> ReleaseForFeatures(absl::string_view release,
                                                  absl::string_view version,
                                                  absl::string_view upstream) {
  absl::StatusOr<KernelRelease> running = ParseKernelRelease(release);
  if (!running.ok()) return running.status();
  FeatureRelease out;
  out.release = *running;
  out.vendor = VendorOf(*running, version);
  if (running->IsReleaseCandidate()) {
    out.kind = ReleaseKind::kReleaseCandidate;
    return out;
  }
  if (!upstream.empty()) {
    absl::StatusOr<KernelRelease> up = ParseKernelRelease(upstream);
    if (!up.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("upstream version: ", up.status().message()));
    }
    out.release = *up;
    out.kind = ReleaseKind::kVendorUpstream;
    if (out.vendor.empty()) out.vendor = "vendor";
    return out;
  }
  out.kind = out.vendor.empty() ? ReleaseKind::kMainline
                                : ReleaseKind::kVendorUnmapped;
  return out;
}

}  // namespace tracehealth
