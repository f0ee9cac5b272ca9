// Builds the storage row of a validated report: key prediction columns plus
// the serialized report.
#ifndef TRACEHEALTH_SERVER_INGEST_REPORT_ROW_H_
#define TRACEHEALTH_SERVER_INGEST_REPORT_ROW_H_

#include <string>

#include "absl/time/time.h"
#include "proto/tracehealth/v1/report.pb.h"
#include "server/storage/storage.h"

namespace tracehealth::server {

// `blob` is `report` serialized (passed in so callers holding the wire bytes
// need not serialize again).
ReportRow MakeReportRow(const v1::HostReport& report, std::string blob,
                        absl::Time received_at);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_INGEST_REPORT_ROW_H_
