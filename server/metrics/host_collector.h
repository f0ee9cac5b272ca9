// HostCollector: the fleet's prediction metrics, built from the HostIndex's
// records at scrape time (so ingest never pays for them).
//
// Fleet aggregates, whatever the fleet's size (at most 530 series):
//   tracehealth_fleet_hosts{risk}                 hosts by worst risk
//   tracehealth_fleet_stale_hosts                 hosts past their intervals
//   tracehealth_fleet_kernel_hosts{kernel,preempt} hosts by kernel release and
//       preemption mode (the kMaxKernelSeries largest; the rest as
//       kernel="other")
//   tracehealth_fleet_kernel_stall_hosts{kernel,preempt} of those, the hosts
//       at worst risk stall (same series)
//   tracehealth_fleet_attach_risk_hosts{probe_kind,risk}
//   tracehealth_fleet_attach_latency_seconds{probe_kind}   histogram
//   tracehealth_fleet_attach_stall_margin_ratio{probe_kind} histogram of each
//       host's largest applying soft-lockup / RCU-stall margin
//   tracehealth_metrics_host_series_hosts         hosts exported one by one
//   tracehealth_metrics_host_series_omitted_hosts eligible ones left out
//
// Per-host series, only for the hosts that need attention: worst risk at
// least `host_min_risk`, stale, or whose agent dropped reports; worst first
// (risk, worst margin, largest attach latency, host id), at most
// `max_hosts` of them (at most 40 series a host: 10 latencies, up to 20
// margins on a non-preemptible kernel, 4 of the stack depot and vmap purge, 6
// more):
//   tracehealth_attach_latency_seconds{host,probe_kind}
//   tracehealth_attach_stall_margin_ratio{host,probe_kind,check}
//   tracehealth_stackdepot_pool_budget_ratio{host}
//   tracehealth_stackdepot_seconds_to_exhaustion{host}
//   tracehealth_vmap_purge_seconds{host}
//   tracehealth_vmap_purge_lockup_margin_ratio{host}
//   tracehealth_host_last_report_timestamp_seconds{host}
//   tracehealth_host_report_interval_seconds{host}
//   tracehealth_host_threads{host}
//   tracehealth_agent_spool_dropped_reports_total{host}
//   tracehealth_host_risk{host}   (tracehealth.v1.Risk value, 0 = unknown)
//   tracehealth_host_stale{host}  (0/1)
// Every host stays available through the query API and the page.
//
// Thread safety: Collect may run concurrently with index updates.
#ifndef TRACEHEALTH_SERVER_METRICS_HOST_COLLECTOR_H_
#define TRACEHEALTH_SERVER_METRICS_HOST_COLLECTOR_H_

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "prometheus/collectable.h"
#include "prometheus/metric_family.h"
#include "proto/tracehealth/v1/predictions.pb.h"
#include "server/index/host_index.h"

namespace tracehealth::server {

// Kernel (release, preemption) series at most in
// tracehealth_fleet_kernel_hosts.
inline constexpr size_t kMaxKernelSeries = 100;

struct HostMetricsOptions {
  double stale_after_intervals = 3;
  // Per-host series for hosts at or above this worst risk (and stale ones,
  // and those whose agent dropped reports).
  v1::Risk host_min_risk = v1::RISK_LATENCY;
  // Hosts with per-host series at most (0: none).
  size_t max_hosts = 1000;
  std::function<absl::Time()> now = [] { return absl::Now(); };
};

class HostCollector : public prometheus::Collectable {
 public:
  // `index` is not owned and must outlive the collector.
  HostCollector(const HostIndex* index, HostMetricsOptions options);

  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  bool IsStale(const HostEntry& e, absl::Time now) const;

  const HostIndex* const index_;
  const HostMetricsOptions options_;
};

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_METRICS_HOST_COLLECTOR_H_
