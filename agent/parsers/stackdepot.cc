#include "agent/parsers/stackdepot.h"

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace tracehealth::agent {

absl::StatusOr<StackDepotCounters> ParseStackDepotStats(
    absl::string_view text) {
  StackDepotCounters out;
  bool have_pools = false;
  for (absl::string_view raw : absl::StrSplit(text, '\n')) {
    absl::string_view line = absl::StripAsciiWhitespace(raw);
    if (line.empty()) continue;
    size_t colon = line.find(':');
    int64_t v;
    if (colon == absl::string_view::npos ||
        !absl::SimpleAtoi(line.substr(colon + 1), &v)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "stackdepot stats: malformed line '", line.substr(0, 80), "'"));
    }
    if (v < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "stackdepot stats: negative value in '", line.substr(0, 80), "'"));
    }
    absl::string_view key = line.substr(0, colon);
    uint64_t u = static_cast<uint64_t>(v);
    if (key == "pools") {
      out.pools = u;
      have_pools = true;
    } else if (key == "refcounted_allocations") {
      out.refcounted_allocations = u;
    } else if (key == "refcounted_frees") {
      out.refcounted_frees = u;
    } else if (key == "refcounted_in_use") {
      out.refcounted_in_use = u;
    } else if (key == "freelist_size") {
      out.freelist_size = u;
    } else if (key == "persistent_count") {
      out.persistent_count = u;
    } else if (key == "persistent_bytes") {
      out.persistent_bytes = u;
    }
  }
  if (!have_pools) {
    return absl::InvalidArgumentError("stackdepot stats: no 'pools:' line");
  }
  return out;
}

}  // namespace tracehealth::agent
