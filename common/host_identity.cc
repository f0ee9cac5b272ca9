#include "common/host_identity.h"

namespace tracehealth {
namespace {

bool IsAsciiLetter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool IsAsciiDigit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

bool IsValidHostId(absl::string_view host_id) {
  if (host_id.empty() || host_id.size() > kMaxHostIdBytes) return false;
  bool only_dots = true;
  for (char c : host_id) {
    const bool ok =
        IsAsciiLetter(c) || IsAsciiDigit(c) || c == '.' || c == '_' || c == '-';
    if (!ok) return false;
    only_dots = only_dots && c == '.';
  }
  return !only_dots;
}

bool IsValidLabelKey(absl::string_view key) {
  if (key.empty()) return false;
  for (size_t i = 0; i < key.size(); ++i) {
    const char c = key[i];
    if (!(IsAsciiLetter(c) || c == '_' || (i > 0 && IsAsciiDigit(c))))
      return false;
  }
  return true;
}

}  // namespace tracehealth
