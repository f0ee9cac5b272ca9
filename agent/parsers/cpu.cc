#include "agent/parsers/cpu.h"

#include <set>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace tracehealth::agent {
namespace {

constexpr uint64_t kMaxCpus = 1 << 20;

absl::Status Bad(absl::string_view detail) {
  return absl::InvalidArgumentError(absl::StrCat("cpu list: ", detail));
}

}  // namespace

absl::StatusOr<uint32_t> ParseCpuListCount(absl::string_view text) {
  absl::string_view t = absl::StripAsciiWhitespace(text);
  if (t.empty()) return Bad("empty");
  uint64_t count = 0;
  int64_t last_end = -1;
  for (absl::string_view range : absl::StrSplit(t, ',')) {
    std::vector<absl::string_view> ends = absl::StrSplit(range, '-');
    uint32_t lo, hi;
    if (ends.size() == 1 && absl::SimpleAtoi(ends[0], &lo)) {
      hi = lo;
    } else if (ends.size() != 2 || !absl::SimpleAtoi(ends[0], &lo) ||
               !absl::SimpleAtoi(ends[1], &hi)) {
      return Bad(absl::StrCat("malformed range '", range, "'"));
    }
    // SimpleAtoi accepts a leading '+' or spaces; the kernel never prints them.
    for (absl::string_view e : ends) {
      if (e.empty() || !absl::ascii_isdigit(e[0])) {
        return Bad(absl::StrCat("malformed range '", range, "'"));
      }
    }
    if (hi < lo) return Bad(absl::StrCat("reversed range '", range, "'"));
    if (static_cast<int64_t>(lo) <= last_end) {
      return Bad(absl::StrCat("range '", range, "' overlaps or is unordered"));
    }
    last_end = hi;
    count += static_cast<uint64_t>(hi) - lo + 1;
    if (count > kMaxCpus) return Bad("implausibly many CPUs");
  }
  return static_cast<uint32_t>(count);
}

absl::StatusOr<CpuInfoFacts> ParseCpuInfo(absl::string_view text) {
  CpuInfoFacts out;
  bool have_flags = false;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    size_t colon = line.find(':');
    if (colon == absl::string_view::npos) continue;
    absl::string_view key = absl::StripAsciiWhitespace(line.substr(0, colon));
    absl::string_view value =
        absl::StripAsciiWhitespace(line.substr(colon + 1));
    if (key == "model name" && !out.model_name.has_value()) {
      out.model_name = std::string(value);
    } else if ((key == "flags" || key == "Features") && !have_flags) {
      have_flags = true;
      for (absl::string_view flag :
           absl::StrSplit(value, ' ', absl::SkipEmpty())) {
        if (flag == "invlpgb") out.invlpgb = true;
        if (flag == "hypervisor") out.hypervisor = true;
      }
    }
    if (have_flags && out.model_name.has_value()) break;
  }
  if (!have_flags) {
    return absl::InvalidArgumentError("/proc/cpuinfo: no flags line");
  }
  return out;
}

}  // namespace tracehealth::agent
