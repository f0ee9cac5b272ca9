#include "common/kernel/release.h"

#include <cctype>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace tracehealth {
namespace {

// Reads a run of decimal digits at text[*pos], at most 5 of them.
bool ReadNumber(absl::string_view text, size_t* pos, int* out) {
  size_t start = *pos;
  int value = 0;
  while (*pos < text.size() && absl::ascii_isdigit(text[*pos])) {
    if (*pos - start >= 5) return false;
    value = value * 10 + (text[*pos] - '0');
    ++*pos;
  }
  if (*pos == start) return false;
  *out = value;
  return true;
}

}  // namespace

std::string KernelRelease::Version() const {
  return has_patch ? absl::StrCat(major, ".", minor, ".", patch)
                   : absl::StrCat(major, ".", minor);
}

bool KernelRelease::IsReleaseCandidate() const {
  return suffix.size() > 3 && suffix.compare(0, 3, "-rc") == 0 &&
         absl::ascii_isdigit(suffix[3]);
}

std::string KernelRelease::ToString() const {
  return absl::StrCat(Version(), suffix);
}

absl::StatusOr<KernelRelease> ParseKernelRelease(absl::string_view text) {
  absl::string_view s = absl::StripAsciiWhitespace(text);
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("kernel release \"", absl::CEscape(text), "\": ", why));
  };
  if (s.empty()) return bad("empty");
  if (s.size() > 256) return bad("longer than 256 bytes");
  for (char c : s) {
    if (!absl::ascii_isprint(c) || c == ' ') return bad("unexpected character");
  }
  KernelRelease r;
  size_t pos = 0;
  if (!ReadNumber(s, &pos, &r.major)) return bad("no major version number");
  if (pos >= s.size() || s[pos] != '.') return bad("expected MAJOR.MINOR");
  ++pos;
  if (!ReadNumber(s, &pos, &r.minor)) return bad("no minor version number");
  if (pos + 1 < s.size() && s[pos] == '.' && absl::ascii_isdigit(s[pos + 1])) {
    ++pos;
    if (!ReadNumber(s, &pos, &r.patch)) return bad("bad patch number");
    r.has_patch = true;
  }
  if (r.major < 2 || r.major > 99) return bad("major version out of range");
  if (r.minor > 9999 || r.patch > 9999)
    return bad("version number out of range");
  r.suffix = std::string(s.substr(pos));
  if (!r.suffix.empty()) {
    char sep = r.suffix[0];
    if (sep != '-' && sep != '+' && sep != '_' && sep != '.' && sep != '~') {
      return bad("suffix must start with '-', '+', '_', '.' or '~'");
    }
  }
  return r;
}

}  // namespace tracehealth
