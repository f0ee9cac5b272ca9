#include "tools/tracehealthctl/events_table.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/event_names.h"
#include "common/proto_time.h"
#include "tools/tracehealthctl/table.h"

namespace tracehealth::server {
namespace {

std::string Predicted(const v1::StoredEvent& e) {
  std::string out;
  switch (e.predicted()) {
    case v1::EVENT_PREDICTION_YES:
      out = "yes";
      break;
    case v1::EVENT_PREDICTION_NO:
      out = "no";
      break;
    default:
      out = "unknown";
  }
  if (!e.has_prediction_seq()) return out;
  return absl::StrCat(out, " (",
                      absl::AsciiStrToLower(absl::StripPrefix(
                          v1::Risk_Name(e.predicted_risk()), "RISK_")),
                      ", seq ", e.prediction_seq(), ")");
}

}  // namespace

absl::StatusOr<v1::ListEventsRequest> EventsRequest(
    const std::string& host, const std::string& predicted, absl::Duration since,
    int32_t limit, absl::Time now) {
  v1::ListEventsRequest req;
  req.set_host_id(host);
  if (predicted == "yes") {
    req.set_predicted(v1::EVENT_PREDICTION_YES);
  } else if (predicted == "no") {
    req.set_predicted(v1::EVENT_PREDICTION_NO);
  } else if (predicted == "unknown") {
    req.set_predicted(v1::EVENT_PREDICTION_UNKNOWN);
  } else if (!predicted.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--predicted=", predicted, ": want yes, no or unknown"));
  }
  if (since <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--since=", absl::FormatDuration(since), ": want a positive duration"));
  }
  *req.mutable_from() = ToProto(now - since);
  *req.mutable_to() = ToProto(now);
  if (limit > 0) req.set_limit(static_cast<uint32_t>(limit));
  return req;
}

void PrintEvents(const v1::ListEventsResponse& resp, std::ostream& out) {
  Table t({"LOGGED", "HOST", "EVENT", "MODEL", "PREDICTED", "FRAME"});
  for (const v1::StoredEvent& e : resp.events()) {
    t.AddRow(
        {absl::FormatTime("%Y-%m-%d %H:%M:%S", FromProto(e.event().logged_at()),
                          absl::UTCTimeZone()),
         e.host_id(), DescribeEvent(e.event()),
         EventModelLabel(e.event().model()), Predicted(e),
         e.event().frames().empty() ? "" : e.event().frames(0)});
  }
  t.Print(out);
  out << resp.events_size() << " event(s)\n";
}

}  // namespace tracehealth::server
