// HostCollector: per-host prediction gauges, built from the HostIndex at
// scrape time (so ingest never pays for them).
//
//   tracehealth_attach_latency_seconds{host,probe_kind}
//   tracehealth_attach_stall_margin_ratio{host,probe_kind,check}
//   tracehealth_stackdepot_pool_budget_ratio{host}
//   tracehealth_stackdepot_seconds_to_exhaustion{host}
//   tracehealth_vmap_purge_seconds{host}
//   tracehealth_host_last_report_timestamp_seconds{host}
//   tracehealth_host_risk{host}   (tracehealth.v1.Risk value, 0 = unknown)
//   tracehealth_host_stale{host}  (0/1)
//
// Thread safety: Collect may run concurrently with index updates.
#ifndef TRACEHEALTH_SERVER_METRICS_HOST_COLLECTOR_H_
#define TRACEHEALTH_SERVER_METRICS_HOST_COLLECTOR_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "prometheus/collectable.h"
#include "prometheus/metric_family.h"
#include "proto/tracehealth/v1/predictions.pb.h"
#include "server/index/host_index.h"

namespace tracehealth::server {

// "kprobe_multi_return" for PROBE_KIND_KPROBE_MULTI_RETURN.
std::string ProbeKindLabel(v1::ProbeKind kind);

class HostCollector : public prometheus::Collectable {
 public:
  // `index` is not owned and must outlive the collector.
  HostCollector(
      const HostIndex* index, double stale_after_intervals,
      std::function<absl::Time()> now = [] { return absl::Now(); });

  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  const HostIndex* const index_;
  const double stale_after_intervals_;
  const std::function<absl::Time()> now_;
};

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_METRICS_HOST_COLLECTOR_H_
