#include "server/ingest/report_row.h"

#include <utility>

#include "proto/tracehealth/v1/report.pb.h"
#include "server/index/host_record_codec.h"
#include "common/report/material.h"
#include "server/report/stored_report.h"

namespace tracehealth::server {

ReportRow MakeReportRow(const ReportHead& head, std::string blob,
                        absl::Time received_at,
                        std::shared_ptr<const v1::HostReport>* parsed) {
  ReportRow row;
  row.host_id = std::string(head.host_id);
  row.seq = head.seq;
  row.observed_at_ns =
      head.observed_at_seconds * 1000000000LL + head.observed_at_nanos;
  row.received_at_ns = absl::ToUnixNanos(received_at);
  row.worst_risk = head.worst_risk;
  row.attach_latency_seconds = head.attach_latency_seconds;
  row.pool_budget_ratio = head.pool_budget_ratio;
  row.purge_seconds = head.purge_seconds;
  // The record a restart and the index load (host_record_codec.h), built
  // from the whole report.
  // What the store's heartbeat decision reads (common/report/material.h).
  auto describe = [&row, &blob](const v1::HostReport& report) {
    row.record = EncodeHostRecord(report);
    Material m = MaterialOfWire(blob);
    row.material_digest = m.digest;
    row.material_numbers = std::move(m.numbers);
    if (report.snapshot().threads().has_total())
      row.threads = report.snapshot().threads().total();
  };
  if (parsed != nullptr) {
    bool ok = false;
    *parsed = ParseStoredReport(row.host_id, row.seq, blob, &ok);
    if (ok) describe(**parsed);
  } else {
    thread_local v1::HostReport report;
    if (report.ParseFromString(blob)) describe(report);
  }
  row.blob = std::move(blob);
  return row;
}

}  // namespace tracehealth::server
