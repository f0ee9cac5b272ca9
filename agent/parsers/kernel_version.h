// The upstream stable release a Debian or Ubuntu kernel is built from, which
// its release string does not name ("6.1.0-28-amd64" is an ABI):
// - Debian: /proc/version ends with the version string, "#1 SMP
//   PREEMPT_DYNAMIC Debian 6.1.119-1 (2024-11-22)"; the compiler's part
//   before it can say "Debian" too ("gcc-12 (Debian 12.2.0-14) 12.2.0"), so
//   the last "Debian X.Y.Z" counts.
// - Ubuntu: /proc/version_signature, "Ubuntu 6.8.0-45.45-generic 6.8.12":
//   the last field.
//
// Pure functions; errors are InvalidArgument.
#ifndef TRACEHEALTH_AGENT_PARSERS_KERNEL_VERSION_H_
#define TRACEHEALTH_AGENT_PARSERS_KERNEL_VERSION_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tracehealth::agent {

struct UpstreamVersion {
  // "6.1.119".
  std::string version;
  // What it was read from: "Debian 6.1.119-1", or the signature line.
  std::string evidence;
};

// The last "Debian X.Y[.Z]..." of /proc/version (or /proc/sys/kernel/version)
// as an upstream version; nullopt when there is none.
std::optional<UpstreamVersion> DebianUpstreamVersion(absl::string_view text);

// /proc/version_signature. Errors: fewer than two fields, or a last field
// that is not a release.
absl::StatusOr<UpstreamVersion> ParseVersionSignature(absl::string_view text);

}  // namespace tracehealth::agent

#endif  // TRACEHEALTH_AGENT_PARSERS_KERNEL_VERSION_H_
