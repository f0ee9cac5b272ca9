// The agent's predictions and key inputs as a Prometheus text exposition
// file for node_exporter's textfile collector (hosts that no tracehealth
// server scrapes: `tracehealth-agent --textfile=DIR`).
//
// The families and labels are the server's /metrics ones where they overlap
// (server/metrics/host_collector.cc), so the shipped rules
// (deploy/prometheus/tracehealth.rules.yml) read either source:
//   tracehealth_attach_latency_seconds{host,probe_kind}
//   tracehealth_attach_stall_margin_ratio{check,host,probe_kind}
//     check: soft_lockup, rcu_stall, latency; the first applying check of
//     each kind of an attach prediction
//   tracehealth_stackdepot_pool_budget_ratio{host}, present when predicted
//   tracehealth_stackdepot_seconds_to_exhaustion{host}, present when predicted
//   tracehealth_vmap_purge_seconds{host}, when the vmap purge applies
//   tracehealth_vmap_purge_lockup_margin_ratio{host}, its first applying
//     soft-lockup check
//   tracehealth_host_last_report_timestamp_seconds{host}: the report's
//     observed_at (the server's is when it stored one)
//   tracehealth_host_report_interval_seconds{host}, when > 0
//   tracehealth_host_threads{host}, when the snapshot read them
//   tracehealth_host_risk{host}: worst predicted risk (0 unknown .. 4 stall)
//   tracehealth_agent_spool_dropped_reports_total{host} (counter)
// Written by prometheus-cpp's TextSerializer (format 0.0.4: label values
// escaped); families without a sample are left out.
//
// Thread safety: pure functions; WriteTextfile touches only its directory.
#ifndef TRACEHEALTH_AGENT_REPORT_TEXTFILE_H_
#define TRACEHEALTH_AGENT_REPORT_TEXTFILE_H_

#include <string>

#include "absl/status/status.h"
#include "proto/tracehealth/v1/report.pb.h"

namespace tracehealth::agent {

// The file node_exporter reads: DIR/tracehealth.prom.
inline constexpr char kTextfileName[] = "tracehealth.prom";

// The exposition of `report` (its host_id as the `host` label).
std::string RenderTextfile(const v1::HostReport& report);

// Writes RenderTextfile(report) to DIR/tracehealth.prom atomically: to a
// temporary file in DIR (node_exporter skips names not ending in .prom),
// then renamed over the old one, so a scrape sees the previous cycle's file
// or this one, never a part. An error names the path and leaves the
// previous file in place.
absl::Status WriteTextfile(const std::string& dir,
                           const v1::HostReport& report);

}  // namespace tracehealth::agent

#endif  // TRACEHEALTH_AGENT_REPORT_TEXTFILE_H_
