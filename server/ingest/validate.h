// Validation of incoming HostReports: a pure function of the report's wire
// bytes (and their decoded head), the server's clock reading and the
// limits. Run before a report is queued for storage; an invalid report is
// answered with a Rejection (INVALID_ARGUMENT) and never stored, one that
// does not decode ends its stream.
#ifndef TRACEHEALTH_SERVER_INGEST_VALIDATE_H_
#define TRACEHEALTH_SERVER_INGEST_VALIDATE_H_

#include <cstddef>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/host_identity.h"
#include "common/report/report_scan.h"
#include "server/report/report_head.h"

namespace tracehealth::server {

struct ValidationLimits {
  size_t max_labels = kMaxLabels;
  size_t max_label_key_bytes = kMaxLabelKeyBytes;
  size_t max_label_value_bytes = kMaxLabelValueBytes;
  size_t max_version_bytes = 128;
  // Serialized size of one report.
  size_t max_report_bytes = 1 << 20;
  // Any repeated field (users, links, history, basis entries, ...).
  int max_repeated = 4096;
  // How far observed_at may lie ahead of the server's clock.
  absl::Duration max_clock_skew = absl::Hours(1);
  // The agent's report interval (staleness is judged by it).
  double min_interval_seconds = 0.001;
  double max_interval_seconds = 86400;
};

// OK, or InvalidArgument naming the first problem found (the offending field
// first in the message): host_id charset or length (IsValidHostId), seq 0
// (or above 2^63-1), observed_at missing/out of range/too far in the future,
// interval_seconds outside [min, max]_interval_seconds (0 included), too
// many or oversized labels, version strings too long, a non-finite number
// anywhere, a negative number where only >= 0 makes sense, an enum value its
// type does not define, kernel.cmdline over 4 KiB, two predictions.attach
// entries for one probe kind, oversized repeated fields or report,
// feature_table_override rows that do not parse (FeatureTableFromOverride).
// DataLoss when `wire` does not decode as a HostReport (see CheckReportWire).
// `head` must be DecodeReportHead(wire).
absl::Status ValidateReport(const ReportHead& head, absl::string_view wire,
                            absl::Time now, const ValidationLimits& limits);

// The same of a report already walked: `scan` is ScanReport(wire,
// WireLimitsOf(limits)) of the `wire_size` bytes, whose wire check it
// reads instead of walking them again.
absl::Status ValidateScannedReport(const ReportScan& scan, size_t wire_size,
                                   absl::Time now,
                                   const ValidationLimits& limits);

// The wire check's part of `limits`.
WireLimits WireLimitsOf(const ValidationLimits& limits);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_INGEST_VALIDATE_H_
