// `tracehealthctl events`: the request from its flags and the table of the
// answer (one row per observed event, newest logged first).
//
// Thread safety: pure functions.
#ifndef TRACEHEALTH_TOOLS_TRACEHEALTHCTL_EVENTS_TABLE_H_
#define TRACEHEALTH_TOOLS_TRACEHEALTHCTL_EVENTS_TABLE_H_

#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "proto/tracehealth/v1/query.pb.h"

namespace tracehealth::server {

// `host` empty: every host; `predicted` "", "yes", "no" or "unknown"
// (InvalidArgument naming the value otherwise); events logged in the
// `since` before `now` (InvalidArgument unless positive).
absl::StatusOr<v1::ListEventsRequest> EventsRequest(
    const std::string& host, const std::string& predicted, absl::Duration since,
    int32_t limit, absl::Time now);

// Columns LOGGED (UTC), HOST, EVENT (common/event_names.h DescribeEvent),
// MODEL, PREDICTED (yes/no/unknown and the risk compared with, e.g. "no
// (none, seq 11)"), FRAME (the innermost reliable frame); then "N
// event(s)".
void PrintEvents(const v1::ListEventsResponse& resp, std::ostream& out);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_TOOLS_TRACEHEALTHCTL_EVENTS_TABLE_H_
