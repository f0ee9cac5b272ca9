#include "tools/tracehealthctl/accuracy_table.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/event_names.h"
#include "common/format.h"
#include "common/proto_time.h"
#include "tools/tracehealthctl/table.h"

namespace tracehealth::server {
namespace {

std::string Ns(double seconds) {
  return absl::StrFormat("%.1f", seconds * 1e9);
}

std::string Ratio(bool has, double r) {
  return has ? absl::StrFormat("%.2f", r) : "-";
}

std::string Secs(bool has, double s) { return has ? FormatSeconds(s) : "-"; }

// What the class's hosts are priced with: "180.0" (one price), or "100.0,
// x2.26 past 11 tasks (3 points, 8-32 threads)" (the curve's price at the
// fewest threads, its last level).
std::string Priced(const v1::ClassAccuracy& c) {
  std::string out = Ns(c.c_visit_seconds());
  if (c.visit_levels_size() > 0) {
    const v1::VisitLevel& last = c.visit_levels(c.visit_levels_size() - 1);
    absl::StrAppend(&out, absl::StrFormat(", x%.2f past %.0f tasks",
                                          last.factor(), last.from_tasks()));
  }
  if (c.curve_points() > 1) {
    absl::StrAppend(&out, " (", c.curve_points(), " points, ",
                    c.curve_min_threads(), "-", c.curve_max_threads(),
                    " threads)");
  }
  return out;
}

}  // namespace

absl::StatusOr<v1::AccuracyRequest> AccuracyRequestOf(absl::Duration since,
                                                      int32_t limit,
                                                      absl::Time now) {
  if (since <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--since=", absl::FormatDuration(since), ": want a positive duration"));
  }
  v1::AccuracyRequest req;
  *req.mutable_from() = ToProto(now - since);
  *req.mutable_to() = ToProto(now);
  if (limit > 0) req.set_limit(static_cast<uint32_t>(limit));
  return req;
}

void PrintAccuracy(const v1::AccuracyResponse& resp, std::ostream& out) {
  Table classes({"CLASS", "CANARIES", "C_VISIT NS", "RANGE NS", "SPREAD",
                 "PRICED NS", "FIXED", "HOSTS", "EVENTS (Y/N/?)", "RATIO",
                 "CALIBRATED"});
  for (const v1::ClassAccuracy& c : resp.classes()) {
    const bool calibrated = c.canaries() > 0;
    classes.AddRow(
        {c.hardware_class(),
         absl::StrCat(c.canaries(), " (", c.calibrations(), " calibrations)"),
         calibrated ? Ns(c.c_visit_median_seconds()) : "-",
         calibrated ? absl::StrCat(Ns(c.c_visit_min_seconds()), "-",
                                   Ns(c.c_visit_max_seconds()))
                    : "-",
         calibrated ? absl::StrFormat("%.0f%%", c.c_visit_spread() * 100) : "-",
         calibrated ? Priced(c) : "-",
         calibrated ? FormatSeconds(c.fixed_median_seconds()) : "-",
         absl::StrCat(c.hosts()),
         absl::StrCat(c.events(), " (", c.events_predicted(), "/",
                      c.events_missed(), "/", c.events_unknown(), ")"),
         Ratio(c.has_median_ratio(), c.median_ratio()),
         Ratio(c.has_median_calibrated_ratio(), c.median_calibrated_ratio())});
  }
  classes.Print(out);
  out << resp.classes_size() << " class(es)";
  if (resp.events_unclassified() > 0) {
    out << ", " << resp.events_unclassified() << " event(s) of no known class";
  }
  out << "\n";
  Table events({"LOGGED", "HOST", "EVENT", "OBSERVED", "PREDICTED", "RATIO",
                "CALIBRATED", "RATIO"});
  int rows = 0;
  for (const v1::ClassAccuracy& c : resp.classes()) {
    for (const v1::EventAccuracy& s : c.samples()) {
      events.AddRow(
          {absl::FormatTime("%Y-%m-%d %H:%M:%S", FromProto(s.logged_at()),
                            absl::UTCTimeZone()),
           s.host_id(), EventKindName(s.kind()),
           s.has_observed_seconds() ? absl::StrCat(s.observed_seconds(), " s")
                                    : "-",
           Secs(s.has_predicted_seconds(), s.predicted_seconds()),
           Ratio(s.has_ratio(), s.ratio()),
           Secs(s.has_calibrated_seconds(), s.calibrated_seconds()),
           Ratio(s.has_calibrated_ratio(), s.calibrated_ratio())});
      ++rows;
    }
  }
  if (rows == 0) return;
  events.Print(out);
  out << rows << " event(s) compared\n";
}

}  // namespace tracehealth::server
