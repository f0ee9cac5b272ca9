// The alert families of /metrics, built from the rule engine's alerts at
// scrape time, bounded whatever the number of alerts:
//
//   tracehealth_alerts{alertname,alertstate,host,severity}
//       1 per pending/firing alert (like Prometheus' ALERTS) of at most
//       `max_hosts` hosts, the worst first (HostAlertRank);
//   tracehealth_alert_hosts{alertname,alertstate,severity}
//       pending/firing alerts counted by rule, state and severity (at most
//       rules x 2 x severities series);
//   tracehealth_alerts_omitted_hosts
//       hosts with a pending/firing alert left out of tracehealth_alerts.
//
// Resolved alerts (and any other state) are not exported.
#ifndef TRACEHEALTH_SERVER_ALERTS_ALERT_SERIES_H_
#define TRACEHEALTH_SERVER_ALERTS_ALERT_SERIES_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "prometheus/metric_family.h"
#include "proto/tracehealth/v1/query.pb.h"
#include "server/alerts/engine.h"

namespace tracehealth::server {

// "firing" for ALERT_STATE_FIRING.
std::string AlertStateLabel(v1::AlertState s);

// How bad one alert is; smaller is worse. A host ranks as its worst alert.
// Firing before pending, then severity (critical, warning, anything else),
// then the longest active (earliest active_since), then host id.
struct HostAlertRank {
  int state = 0;     // 0 firing, 1 pending
  int severity = 0;  // 0 critical, 1 warning, 2 other
  int64_t active_since_ns = 0;
  std::string host_id;
  bool operator<(const HostAlertRank& o) const;
};
HostAlertRank RankOf(const AlertBrief& alert);

// The three families above, in that order, for `alerts` (any states, any
// order).
std::vector<prometheus::MetricFamily> AlertSeries(
    absl::Span<const AlertBrief> alerts, size_t max_hosts);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_ALERTS_ALERT_SERIES_H_
