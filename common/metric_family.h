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

// A metric exported both by the server's /metrics (one series per host) and
// by the agent's textfile (its own host): one name, help and type.
struct MetricSpec {
  const char* name;
  const char* help;
  prometheus::MetricType type = prometheus::MetricType::Gauge;
};

// An empty family as `spec` says.
prometheus::MetricFamily Family(const MetricSpec& spec);

// The per-host metrics of both exporters (labels: host, and probe_kind or
// check where said).
namespace host_metric {
inline const MetricSpec kAttachLatency = {
    "tracehealth_attach_latency_seconds",
    "Predicted latency of the first attach of a probe kind."};
inline const MetricSpec kAttachMargin = {
    "tracehealth_attach_stall_margin_ratio",
    "Predicted attach stall over its threshold (> 1: crossed), per check."};
inline const MetricSpec kPoolBudget = {
    "tracehealth_stackdepot_pool_budget_ratio",
    "Stack depot pools used over the pool budget."};
inline const MetricSpec kSecondsToExhaustion = {
    "tracehealth_stackdepot_seconds_to_exhaustion",
    "Predicted seconds until the stack depot pool budget is used up at the "
    "current growth."};
inline const MetricSpec kPurgeSeconds = {
    "tracehealth_vmap_purge_seconds",
    "Predicted duration of one KASAN vmalloc purge."};
inline const MetricSpec kPurgeMargin = {
    "tracehealth_vmap_purge_lockup_margin_ratio",
    "Predicted KASAN vmalloc purge over the soft-lockup threshold (> 1: "
    "crossed)."};
inline const MetricSpec kReportInterval = {
    "tracehealth_host_report_interval_seconds", "The agent's report interval."};
inline const MetricSpec kThreads = {"tracehealth_host_threads",
                                    "Threads on the host."};
inline const MetricSpec kRisk = {
    "tracehealth_host_risk",
    "Worst predicted risk (0 unknown, 1 none, 2 latency, 3 warning, 4 "
    "stall)."};
inline const MetricSpec kSpoolDropped = {
    "tracehealth_agent_spool_dropped_reports_total",
    "Reports the host's agent dropped because its spool was full (since "
    "agent start).",
    prometheus::MetricType::Counter};
}  // namespace host_metric

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
