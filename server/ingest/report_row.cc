#include "server/ingest/report_row.h"

#include <utility>

namespace tracehealth::server {

ReportRow MakeReportRow(const v1::HostReport& report, std::string blob,
                        absl::Time received_at) {
  ReportRow row;
  row.host_id = report.host_id();
  row.seq = report.seq();
  row.observed_at_ns = report.observed_at().seconds() * 1000000000LL +
                       report.observed_at().nanos();
  row.received_at_ns = absl::ToUnixNanos(received_at);
  const v1::Predictions& p = report.predictions();
  row.worst_risk = p.worst_risk();
  for (const v1::AttachPrediction& a : p.attach()) {
    if (a.probe_kind() == v1::PROBE_KIND_KPROBE_MULTI_RETURN) {
      row.attach_latency_seconds = a.latency_seconds();
    }
  }
  if (p.has_stack_depot() && p.stack_depot().has_budget_ratio()) {
    row.pool_budget_ratio = p.stack_depot().budget_ratio();
  }
  if (p.has_vmap_purge() && p.vmap_purge().applies()) {
    row.purge_seconds = p.vmap_purge().purge_seconds();
  }
  row.blob = std::move(blob);
  return row;
}

}  // namespace tracehealth::server
