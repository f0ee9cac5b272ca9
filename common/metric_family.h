// Prometheus metric families built for the text exposition, one way for
// every producer: the server's /metrics collectors and the agent's
// node_exporter textfile (prometheus-cpp's MetricFamily, serialized by its
// TextSerializer).
//
// Thread safety: pure functions.
#ifndef TRACEHEALTH_COMMON_METRIC_FAMILY_H_
#define TRACEHEALTH_COMMON_METRIC_FAMILY_H_

#include <string>
#include <vector>

#include "prometheus/client_metric.h"
#include "prometheus/metric_family.h"
#include "prometheus/metric_type.h"
#include "proto/tracehealth/v1/predictions.pb.h"

namespace tracehealth {

// An empty family of `type` (a gauge unless said) with its name and help.
prometheus::MetricFamily Family(
    std::string name, std::string help,
    prometheus::MetricType type = prometheus::MetricType::Gauge);

// Appends a gauge sample with `labels` and `value` to `f`.
void AddGauge(prometheus::MetricFamily& f,
              std::vector<prometheus::ClientMetric::Label> labels,
              double value);

// The probe_kind label's value: "kprobe_multi_return" for
// PROBE_KIND_KPROBE_MULTI_RETURN.
std::string ProbeKindMetricLabel(v1::ProbeKind kind);

// The risk label's value: "stall" for RISK_STALL.
std::string RiskMetricLabel(v1::Risk risk);

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_METRIC_FAMILY_H_
