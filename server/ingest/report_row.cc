#include "server/ingest/report_row.h"

#include <utility>

#include "common/report/material.h"
#include "proto/tracehealth/v1/report.pb.h"
#include "server/index/host_record_codec.h"
#include "server/report/stored_report.h"

namespace tracehealth::server {

namespace {

ReportRow RowOfHead(const ReportHead& head, absl::Time received_at) {
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
  row.threads = head.threads_total;
  return row;
}

// What the store's heartbeat decision reads (common/report/material.h):
// `known` when given, else read from `blob`.
void Describe(absl::string_view blob, Material* known, ReportRow& row) {
  Material m = known != nullptr ? std::move(*known) : MaterialOfWire(blob);
  row.material_digest = m.digest;
  row.material_numbers = ShareNumbers(std::move(m.numbers));
}

ReportRow MakeRow(const ReportHead& head, std::string blob,
                  absl::Time received_at, Material* known,
                  std::shared_ptr<const v1::HostReport>* parsed) {
  ReportRow row = RowOfHead(head, received_at);
  if (parsed != nullptr) {
    bool ok = false;
    *parsed = ParseStoredReport(row.host_id, row.seq, blob, &ok);
    if (ok) {
      Describe(blob, known, row);
      // The record only if the store keeps the report whole.
      row.whole = [report = *parsed](std::string*, std::string* record) {
        *record = EncodeHostRecord(*report);
      };
    }
  } else {
    thread_local v1::HostReport report;
    if (report.ParseFromString(blob)) {
      Describe(blob, known, row);
      row.record = EncodeHostRecord(report);
    }
  }
  row.blob = std::move(blob);
  return row;
}

}  // namespace

ReportRow MakeReportRow(const ReportHead& head, std::string blob,
                        absl::Time received_at,
                        std::shared_ptr<const v1::HostReport>* parsed) {
  return MakeRow(head, std::move(blob), received_at, nullptr, parsed);
}

ReportRow MakeReportRow(const ReportHead& head, std::string blob,
                        absl::Time received_at, Material material,
                        std::shared_ptr<const v1::HostReport>* parsed) {
  return MakeRow(head, std::move(blob), received_at, &material, parsed);
}

ReportRow MakeReportRowOf(const ReportHead& head,
                          std::shared_ptr<const v1::HostReport> parsed,
                          absl::Time received_at, const HeartbeatBase& base) {
  ReportRow row = RowOfHead(head, received_at);
  row.material_digest = base.digest;
  row.material_numbers = base.numbers;
  // Serialized, and its record encoded, only if the store keeps it whole.
  row.whole = [report = std::move(parsed)](std::string* blob,
                                           std::string* record) {
    *blob = report->SerializeAsString();
    *record = EncodeHostRecord(*report);
  };
  return row;
}

}  // namespace tracehealth::server
