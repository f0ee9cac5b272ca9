// `tracehealthctl accuracy`: the request from its flags and the tables of
// the answer: one row per hardware class (its calibrations, hosts, events
// and median predicted-vs-observed ratios), then one row per compared
// event.
//
// Thread safety: pure functions.
#ifndef TRACEHEALTH_TOOLS_TRACEHEALTHCTL_ACCURACY_TABLE_H_
#define TRACEHEALTH_TOOLS_TRACEHEALTHCTL_ACCURACY_TABLE_H_

#include <cstdint>
#include <ostream>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "proto/tracehealth/v1/query.pb.h"

namespace tracehealth::server {

// Events logged in the `since` before `now` (InvalidArgument unless
// positive); `limit` 0: the server's default.
absl::StatusOr<v1::AccuracyRequest> AccuracyRequestOf(absl::Duration since,
                                                      int32_t limit,
                                                      absl::Time now);

// Classes: CLASS, CANARIES, C_VISIT (median, ns), RANGE (ns), SPREAD (%),
// FIXED (median), HOSTS, EVENTS (predicted/missed/unknown), RATIO and
// CALIBRATED (median observed / predicted); then events: LOGGED, HOST,
// EVENT, OBSERVED, PREDICTED (then), RATIO, CALIBRATED (now), RATIO; "-"
// where a value is missing.
void PrintAccuracy(const v1::AccuracyResponse& resp, std::ostream& out);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_TOOLS_TRACEHEALTHCTL_ACCURACY_TABLE_H_
