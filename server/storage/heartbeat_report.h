// The report of a heartbeat: its full report with what the heartbeat
// carries (seq, observation time, threads.total, also as every attach
// prediction's threads_total, the kprobe_multi_return attach latency, the
// stack depot budget ratio, the vmap purge time) put in. Everything else is the
// full report's: equal, or within the tolerance for the predictions' numbers
// (common/report/material.h).
#ifndef TRACEHEALTH_SERVER_STORAGE_HEARTBEAT_REPORT_H_
#define TRACEHEALTH_SERVER_STORAGE_HEARTBEAT_REPORT_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/tracehealth/v1/report.pb.h"
#include "server/storage/heartbeat_chunk.h"

namespace tracehealth::server {

// Puts what `beat` carries into `report` (its full report, or a copy of
// it): the one rebuild both a stored heartbeat and a heartbeat form
// (report.proto HeartbeatForm) go through. received_at_ns is not a report
// field and is not put in; how the full report was sent (its `heartbeat`
// mark) is cleared: the rebuilt report was not sent whole.
void PutBeat(const Beat& beat, v1::HostReport* report);

// DataLoss when `full_report` does not parse.
absl::StatusOr<std::string> ReportOfHeartbeat(absl::string_view full_report,
                                              const Beat& beat);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_STORAGE_HEARTBEAT_REPORT_H_
