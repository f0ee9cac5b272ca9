// ReportHead: the few fields of a tracehealth.v1.HostReport that ingest
// needs (identity, sequence, time, labels, the stored prediction columns,
// the feature-table override to check and how the report was sent), read
// straight from the wire bytes without parsing the report
// (common/report/report_scan.h states the contract; ingest asks it together
// with the wire check and the material content, in one walk: ScanReport).
#ifndef TRACEHEALTH_SERVER_REPORT_REPORT_HEAD_H_
#define TRACEHEALTH_SERVER_REPORT_REPORT_HEAD_H_

#include "common/report/report_scan.h"

namespace tracehealth::server {

using ::tracehealth::DecodeReportHead;
using ::tracehealth::ReportHead;

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_REPORT_REPORT_HEAD_H_
