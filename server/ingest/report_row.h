// Builds the storage row of a validated report: key prediction columns, the
// serialized report, its material content and its stored record
// (server/index/host_record_codec.h: the report is parsed for it; a blob
// that does not parse gets none).
#ifndef TRACEHEALTH_SERVER_INGEST_REPORT_ROW_H_
#define TRACEHEALTH_SERVER_INGEST_REPORT_ROW_H_

#include <memory>
#include <string>

#include "absl/time/time.h"
#include "common/report/material.h"
#include "proto/tracehealth/v1/report.pb.h"
#include "server/ingest/heartbeat_bases.h"
#include "server/report/report_head.h"
#include "server/storage/report_store.h"

namespace tracehealth::server {

// `head` is DecodeReportHead(blob); its views are read before `blob` moves
// into the row. When `parsed` is given it gets the parsed report (never
// null: a blob that does not parse gives one with just host_id and seq), for
// StoredReport, and the record is encoded from it only if the store keeps
// the row whole (ReportRow::whole); otherwise the row carries its record.
ReportRow MakeReportRow(
    const ReportHead& head, std::string blob, absl::Time received_at,
    std::shared_ptr<const v1::HostReport>* parsed = nullptr);

// The same with the material content already read (ScanReport's, which is
// MaterialOfWire(blob)): it is moved into the row instead of read again.
ReportRow MakeReportRow(const ReportHead& head, std::string blob,
                        absl::Time received_at, Material material,
                        std::shared_ptr<const v1::HostReport>* parsed);

// The same for the report `parsed` rebuilt from a heartbeat form on `base`
// (heartbeat_bases.h): `head` decodes the form (whose fields are the
// report's), the material content is the base's (the agent found the
// form's equal to it), and the report is serialized and its record encoded
// only if the store keeps the row whole (ReportRow::whole): nearly always
// it is stored as a heartbeat.
ReportRow MakeReportRowOf(const ReportHead& head,
                          std::shared_ptr<const v1::HostReport> parsed,
                          absl::Time received_at, const HeartbeatBase& base);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_INGEST_REPORT_ROW_H_
