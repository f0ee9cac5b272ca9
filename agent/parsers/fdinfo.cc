#include "agent/parsers/fdinfo.h"

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace tracehealth::agent {
namespace {

template <typename T>
absl::Status ParseNumber(absl::string_view key, absl::string_view value,
                         std::optional<T>* out) {
  T v;
  if (!absl::SimpleAtoi(value, &v)) {
    return absl::InvalidArgumentError(
        absl::StrCat("fdinfo: ", key, " '", value, "' is not a number"));
  }
  *out = v;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::optional<BpfLinkFdinfo>> ParseBpfLinkFdinfo(
    absl::string_view text) {
  BpfLinkFdinfo link;
  bool is_link = false;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    size_t colon = line.find(':');
    if (colon == absl::string_view::npos) continue;  // "cookie\t func" table
    absl::string_view key = line.substr(0, colon);
    absl::string_view value =
        absl::StripAsciiWhitespace(line.substr(colon + 1));
    absl::Status s;
    if (key == "link_type") {
      if (value.empty()) {
        return absl::InvalidArgumentError("fdinfo: empty link_type");
      }
      link.link_type = std::string(value);
      is_link = true;
    } else if (key == "link_id") {
      s = ParseNumber(key, value, &link.link_id);
    } else if (key == "prog_id") {
      s = ParseNumber(key, value, &link.prog_id);
    } else if (key == "kprobe_cnt") {
      s = ParseNumber(key, value, &link.kprobe_cnt);
    } else if (key == "missed") {
      s = ParseNumber(key, value, &link.missed);
    }
    if (!s.ok()) return s;
  }
  if (!is_link) return std::optional<BpfLinkFdinfo>();
  return std::optional<BpfLinkFdinfo>(std::move(link));
}

bool IsKprobeMultiLink(const BpfLinkFdinfo& link) {
  return link.link_type == "kprobe_multi" ||
         link.link_type == "kretprobe_multi";
}

}  // namespace tracehealth::agent
