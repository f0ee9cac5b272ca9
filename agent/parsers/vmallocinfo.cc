#include "agent/parsers/vmallocinfo.h"

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace tracehealth::agent {
namespace {

// "0x<hex>-0x<hex>".
bool IsRange(absl::string_view s) {
  size_t dash = s.find('-');
  if (dash == absl::string_view::npos) return false;
  absl::string_view a = s.substr(0, dash), b = s.substr(dash + 1);
  auto hex = [](absl::string_view h) {
    if (h.size() < 3 || h[0] != '0' || h[1] != 'x') return false;
    for (char c : h.substr(2)) {
      if (!absl::ascii_isxdigit(c)) return false;
    }
    return true;
  };
  return hex(a) && hex(b);
}

}  // namespace

void VmallocInfoCounter::AddLine(absl::string_view line) {
  line = absl::StripTrailingAsciiWhitespace(line);
  if (line.empty()) return;
  // Fields: range, size, then the caller or a fixed description.
  size_t sp = line.find(' ');
  absl::string_view range = line.substr(0, sp);
  absl::string_view rest =
      sp == absl::string_view::npos
          ? absl::string_view()
          : absl::StripLeadingAsciiWhitespace(line.substr(sp));
  size_t sp2 = rest.find(' ');
  absl::string_view size_text = rest.substr(0, sp2);
  uint64_t size;
  if (!IsRange(range) || !absl::SimpleAtoi(size_text, &size)) {
    ++counts_.malformed_lines;
    return;
  }
  ++counts_.areas;
  absl::string_view what =
      sp2 == absl::string_view::npos
          ? absl::string_view()
          : absl::StripLeadingAsciiWhitespace(rest.substr(sp2));
  if (what == "unpurged vm_area") {
    ++counts_.unpurged_areas;
    counts_.unpurged_bytes += size;
    if (size >= shadow_page_bytes_) ++counts_.unpurged_shadow_page_areas;
  }
}

absl::StatusOr<VmallocCounts> VmallocInfoCounter::Result() const {
  if (counts_.malformed_lines > 0 &&
      counts_.malformed_lines * 2 > counts_.malformed_lines + counts_.areas) {
    return absl::InvalidArgumentError(absl::StrCat(
        "vmallocinfo: ", counts_.malformed_lines, " of ",
        counts_.malformed_lines + counts_.areas, " lines malformed"));
  }
  return counts_;
}

absl::StatusOr<VmallocCounts> ParseVmallocInfo(absl::string_view text,
                                               uint64_t shadow_page_bytes) {
  VmallocInfoCounter counter(shadow_page_bytes);
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    counter.AddLine(line);
  }
  return counter.Result();
}

}  // namespace tracehealth::agent
