#include "server/metrics/host_collector.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/strip.h"

namespace tracehealth::server {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;

MetricFamily Gauge(const char* name, const char* help) {
  MetricFamily f;
  f.name = name;
  f.help = help;
  f.type = prometheus::MetricType::Gauge;
  return f;
}

void Add(MetricFamily& f, std::vector<ClientMetric::Label> labels,
         double value) {
  ClientMetric m;
  m.label = std::move(labels);
  m.gauge.value = value;
  f.metric.push_back(std::move(m));
}

std::string CheckLabel(v1::ThresholdCheck::Kind k) {
  std::string name = v1::ThresholdCheck::Kind_Name(k);
  return absl::AsciiStrToLower(absl::StripPrefix(name, "KIND_"));
}

}  // namespace

std::string ProbeKindLabel(v1::ProbeKind kind) {
  return absl::AsciiStrToLower(
      absl::StripPrefix(v1::ProbeKind_Name(kind), "PROBE_KIND_"));
}

HostCollector::HostCollector(const HostIndex* index,
                             double stale_after_intervals,
                             std::function<absl::Time()> now)
    : index_(index),
      stale_after_intervals_(stale_after_intervals),
      now_(std::move(now)) {}

std::vector<MetricFamily> HostCollector::Collect() const {
  MetricFamily latency =
      Gauge("tracehealth_attach_latency_seconds",
            "Predicted latency of the first attach of a probe kind.");
  MetricFamily margin = Gauge(
      "tracehealth_attach_stall_margin_ratio",
      "Predicted attach stall over its threshold (> 1: crossed), per check.");
  MetricFamily budget = Gauge("tracehealth_stackdepot_pool_budget_ratio",
                              "Stack depot pools used over the pool budget.");
  MetricFamily exhaustion =
      Gauge("tracehealth_stackdepot_seconds_to_exhaustion",
            "Predicted seconds until the stack depot pool budget "
            "is used up at the current growth.");
  MetricFamily purge = Gauge("tracehealth_vmap_purge_seconds",
                             "Predicted duration of one KASAN vmalloc purge.");
  MetricFamily last =
      Gauge("tracehealth_host_last_report_timestamp_seconds",
            "When the server last stored a report of the host.");
  MetricFamily risk =
      Gauge("tracehealth_host_risk",
            "Worst predicted risk (0 unknown, 1 none, 2 latency, "
            "3 warning, 4 stall).");
  MetricFamily stale =
      Gauge("tracehealth_host_stale",
            "1 when the host missed its last report intervals.");
  MetricFamily purge_margin =
      Gauge("tracehealth_vmap_purge_lockup_margin_ratio",
            "Predicted KASAN vmalloc purge over the soft-lockup threshold (> "
            "1: crossed).");
  MetricFamily interval = Gauge("tracehealth_host_report_interval_seconds",
                                "The agent's report interval.");
  MetricFamily threads =
      Gauge("tracehealth_host_threads", "Threads on the host.");
  MetricFamily dropped;
  dropped.name = "tracehealth_agent_spool_dropped_reports_total";
  dropped.help =
      "Reports the host's agent dropped because its spool was full (since "
      "agent start).";
  dropped.type = prometheus::MetricType::Counter;
  const absl::Time now = now_();
  // A copy of the entries (ids and shared pointers): building the families
  // for a large fleet must not hold the index lock the writer needs.
  for (const HostEntry& e : index_->Select(LabelSelector())) {
    const std::string& host = e.host_id;
    const v1::Predictions& p = e.latest->predictions();
    for (const v1::AttachPrediction& a : p.attach()) {
      std::string kind = ProbeKindLabel(a.probe_kind());
      Add(latency, {{"host", host}, {"probe_kind", kind}}, a.latency_seconds());
      for (const v1::ThresholdCheck& c : a.checks()) {
        if (!c.applies()) continue;
        Add(margin,
            {{"check", CheckLabel(c.kind())},
             {"host", host},
             {"probe_kind", kind}},
            c.margin());
      }
    }
    if (p.stack_depot().has_budget_ratio()) {
      Add(budget, {{"host", host}}, p.stack_depot().budget_ratio());
    }
    if (p.stack_depot().has_seconds_to_exhaustion()) {
      Add(exhaustion, {{"host", host}},
          p.stack_depot().seconds_to_exhaustion());
    }
    if (p.vmap_purge().applies()) {
      Add(purge, {{"host", host}}, p.vmap_purge().purge_seconds());
    }
    for (const v1::ThresholdCheck& c : p.vmap_purge().checks()) {
      if (c.applies() && c.kind() == v1::ThresholdCheck::KIND_SOFT_LOCKUP) {
        Add(purge_margin, {{"host", host}}, c.margin());
      }
    }
    if (e.latest->interval_seconds() > 0) {
      Add(interval, {{"host", host}}, e.latest->interval_seconds());
    }
    if (e.latest->snapshot().threads().has_total()) {
      Add(threads, {{"host", host}},
          static_cast<double>(e.latest->snapshot().threads().total()));
    }
    {
      ClientMetric m;
      m.label = {{"host", host}};
      m.counter.value =
          static_cast<double>(e.latest->health().spool_dropped_total());
      dropped.metric.push_back(std::move(m));
    }
    Add(last, {{"host", host}},
        absl::ToDoubleSeconds(e.last_seen - absl::UnixEpoch()));
    Add(risk, {{"host", host}}, static_cast<double>(p.worst_risk()));
    double interval =
        e.latest->interval_seconds() > 0 ? e.latest->interval_seconds() : 60;
    bool is_stale = absl::ToDoubleSeconds(now - e.last_seen) >
                    interval * stale_after_intervals_;
    Add(stale, {{"host", host}}, is_stale ? 1 : 0);
  }
  std::vector<MetricFamily> out;
  for (MetricFamily* f :
       {&latency, &margin, &budget, &exhaustion, &purge, &purge_margin, &last,
        &interval, &threads, &dropped, &risk, &stale}) {
    out.push_back(std::move(*f));
  }
  return out;
}

}  // namespace tracehealth::server
