// Builds the storage row of a validated report: key prediction columns, the
// serialized report and its stored record (server/index/host_record_codec.h:
// the report is parsed for it; a blob that does not parse gets none).
#ifndef TRACEHEALTH_SERVER_INGEST_REPORT_ROW_H_
#define TRACEHEALTH_SERVER_INGEST_REPORT_ROW_H_

#include <memory>
#include <string>

#include "absl/time/time.h"
#include "proto/tracehealth/v1/report.pb.h"
#include "server/report/report_head.h"
#include "server/storage/report_store.h"

namespace tracehealth::server {

// `head` is DecodeReportHead(blob); its views are read before `blob` moves
// into the row. When `parsed` is given it gets the parsed report (never
// null: a blob that does not parse gives one with just host_id and seq), for
// StoredReport.
ReportRow MakeReportRow(
    const ReportHead& head, std::string blob, absl::Time received_at,
    std::shared_ptr<const v1::HostReport>* parsed = nullptr);

// The same for a report already parsed: `blob` is `parsed` serialized, and
// `head` decodes the same fields (e.g. of its heartbeat form: the fields a
// heartbeat form carries are its report's).
ReportRow MakeReportRowOf(const ReportHead& head, std::string blob,
                          const v1::HostReport& parsed, absl::Time received_at);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_INGEST_REPORT_ROW_H_
