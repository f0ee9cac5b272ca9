#include "agent/parsers/kernel_version.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/kernel/release.h"

namespace tracehealth::agent {
namespace {

// The "X.Y[.Z]" at the start of `text` ("6.1.119-1" -> "6.1.119"); empty
// when it does not start so.
std::string VersionPrefix(absl::string_view text) {
  size_t i = 0;
  int dots = 0;
  while (i < text.size()) {
    if (absl::ascii_isdigit(text[i])) {
      ++i;
    } else if (text[i] == '.' && i > 0 && absl::ascii_isdigit(text[i - 1]) &&
               i + 1 < text.size() && absl::ascii_isdigit(text[i + 1]) &&
               dots < 2) {
      ++dots;
      ++i;
    } else {
      break;
    }
  }
  if (dots == 0) return "";
  return std::string(text.substr(0, i));
}

}  // namespace

std::optional<UpstreamVersion> DebianUpstreamVersion(absl::string_view text) {
  constexpr absl::string_view kKey = "Debian ";
  std::optional<UpstreamVersion> out;
  for (size_t at = text.find(kKey); at != absl::string_view::npos;
       at = text.find(kKey, at + 1)) {
    const absl::string_view rest = text.substr(at + kKey.size());
    const std::string version = VersionPrefix(rest);
    if (version.empty() || !ParseKernelRelease(version).ok()) continue;
    const absl::string_view token = rest.substr(0, rest.find_first_of(" )\n"));
    out = UpstreamVersion{version, absl::StrCat("Debian ", token)};
  }
  return out;
}

absl::StatusOr<UpstreamVersion> ParseVersionSignature(absl::string_view text) {
  const absl::string_view line = absl::StripAsciiWhitespace(text);
  std::vector<absl::string_view> fields =
      absl::StrSplit(line, ' ', absl::SkipEmpty());
  if (fields.size() < 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "version_signature: expected 'NAME RELEASE UPSTREAM', got '",
        line.substr(0, 80), "'"));
  }
  const std::string version = VersionPrefix(fields.back());
  if (version.empty() || version.size() != fields.back().size() ||
      !ParseKernelRelease(version).ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("version_signature: '", fields.back().substr(0, 40),
                     "' is not an upstream release"));
  }
  return UpstreamVersion{version, std::string(line.substr(0, 200))};
}

}  // namespace tracehealth::agent
