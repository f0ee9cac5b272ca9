#include "agent/report/events_text.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "common/enum_names.h"
#include "common/event_names.h"

namespace tracehealth::agent {
namespace {

// Frames shown per event (the report holds up to 16).
constexpr int kShownFrames = 4;

std::string LoggedAt(const v1::ObservedEvent& e) {
  if (!e.has_logged_at()) {
    return absl::StrCat("+", e.ts_usec() / 1000000, "s after boot");
  }
  return absl::FormatTime("%Y-%m-%d %H:%M:%SZ",
                          absl::FromUnixSeconds(e.logged_at().seconds()),
                          absl::UTCTimeZone());
}

std::string Attribution(const v1::ObservedEvent& e) {
  std::string out = EventModelName(e.model());
  if (e.model() == v1::EVENT_MODEL_UNATTRIBUTED) return out;
  std::vector<std::string> why = {e.matched_symbol()};
  if (e.model() == v1::EVENT_MODEL_FGRAPH_ATTACH) {
    std::vector<std::string> kinds;
    for (int k : e.probe_kinds()) {
      kinds.push_back(ProbeKindName(static_cast<v1::ProbeKind>(k)));
    }
    why.push_back(kinds.empty() ? "any fgraph user"
                                : absl::StrJoin(kinds, ", "));
  }
  return absl::StrCat(out, " (", absl::StrJoin(why, "; "), ")");
}

}  // namespace

void AppendKernelLog(const v1::HostReport& r, std::string* out) {
  if (!r.health().has_kmsg()) return;
  const v1::KmsgHealth& h = r.health().kmsg();
  absl::StrAppend(out, "\nKernel log  ");
  if (!h.error().empty()) {
    absl::StrAppend(out, "not read: ", h.error(), "\n");
    return;
  }
  const uint64_t skipped =
      h.malformed_total() + h.truncated_total() + h.oversized_total();
  absl::StrAppend(out, r.observed_events_size(), " event(s) in this report, ",
                  h.events_pending(), " waiting; ", h.records_total(),
                  " records read, ", skipped, " skipped (", h.malformed_total(),
                  " malformed, ", h.truncated_total(), " cut short, ",
                  h.oversized_total(), " oversized), ", h.lost_total(),
                  " lost\n");
  for (const v1::ObservedEvent& e : r.observed_events()) {
    absl::StrAppend(out, "  ", LoggedAt(e), "  ", DescribeEvent(e), "\n",
                    "      ", Attribution(e), "\n");
    const int n = std::min(e.frames_size(), kShownFrames);
    if (n > 0) {
      std::vector<std::string> frames(e.frames().begin(),
                                      e.frames().begin() + n);
      absl::StrAppend(out, "      ", absl::StrJoin(frames, " < "),
                      e.frames_size() > n ? " < ..." : "", "\n");
    }
  }
}

}  // namespace tracehealth::agent
