// The reports of a ReportBatch (proto/tracehealth/v1/ingest.proto), read
// from its wire bytes without parsing them: each is what a Report stream
// would carry, checked and stored by the same path.
//
// Thread safety: a pure function.
#ifndef TRACEHEALTH_SERVER_INGEST_REPORT_BATCH_H_
#define TRACEHEALTH_SERVER_INGEST_REPORT_BATCH_H_

#include <cstddef>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tracehealth::server {

// At most this many reports a batch (ingest.proto says so to agents).
inline constexpr size_t kMaxBatchReports = 256;

// Views into `wire`, one per report, in order. InvalidArgument, naming what
// is wrong, for bytes that do not decode, a field other than `reports`
// (1, length-delimited), or more than kMaxBatchReports reports. An empty
// batch has no reports.
absl::StatusOr<std::vector<absl::string_view>> SplitReportBatch(
    absl::string_view wire);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_INGEST_REPORT_BATCH_H_
