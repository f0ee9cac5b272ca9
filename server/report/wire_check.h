// CheckReportWire: whether the wire bytes of a tracehealth.v1.HostReport
// decode and whether their numbers are acceptable, without parsing them
// (common/report/report_scan.h states the contract; ingest asks it together
// with the head and the material content, in one walk: ScanReport).
#ifndef TRACEHEALTH_SERVER_REPORT_WIRE_CHECK_H_
#define TRACEHEALTH_SERVER_REPORT_WIRE_CHECK_H_

#include "common/report/report_scan.h"

namespace tracehealth::server {

using ::tracehealth::CheckReportWire;
using ::tracehealth::WireLimits;

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_REPORT_WIRE_CHECK_H_
