// CommittedReport: one report the writer has just committed, as it hands it
// to what follows a commit (alert rules, the host index, metrics).
//
// Thread safety: immutable once built; `report` is shared and immutable.
#ifndef TRACEHEALTH_SERVER_REPORT_COMMITTED_REPORT_H_
#define TRACEHEALTH_SERVER_REPORT_COMMITTED_REPORT_H_

#include <memory>
#include <string>

#include "absl/time/time.h"
#include "server/report/stored_report.h"

namespace tracehealth::server {

struct CommittedReport {
  std::shared_ptr<const StoredReport> report;  // never null
  absl::Time received_at;
  // The report's stored record as written with it (ReportRow::record,
  // server/index/host_record_codec.h): the index takes it instead of
  // parsing the report. Empty: none.
  std::string record = {};
};

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_REPORT_COMMITTED_REPORT_H_
