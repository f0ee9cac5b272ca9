#include "server/metrics/host_collector.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/strip.h"
#include "absl/types/span.h"
#include "common/metric_family.h"

namespace tracehealth::server {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;

constexpr int kRisks = v1::RISK_STALL + 1;
constexpr int kPreempts = v1::PREEMPT_MODE_RT + 1;
// Seconds: from the patching of a few sites to minutes of walk.
constexpr double kLatencyBuckets[] = {0.001, 0.01, 0.1, 0.5, 1,  2,
                                      5,     10,   20,  60,  300};
// Predicted / threshold: warning from 0.5, a stall from 1.
constexpr double kMarginBuckets[] = {0.1, 0.25, 0.5, 0.75, 1, 1.5, 2, 5, 10};

std::string PreemptLabel(int mode) {
  return absl::AsciiStrToLower(absl::StripPrefix(
      v1::PreemptMode_Name(static_cast<v1::PreemptMode>(mode)),
      "PREEMPT_MODE_"));
}

// A histogram being filled: counts per bucket (not cumulative), then the
// ClientMetric prometheus-cpp serializes (it adds the +Inf bucket).
struct Histogram {
  std::array<uint64_t, 16> counts{};
  uint64_t count = 0;
  double sum = 0;

  void Observe(double v, absl::Span<const double> bounds) {
    ++count;
    sum += v;
    size_t i =
        std::lower_bound(bounds.begin(), bounds.end(), v) - bounds.begin();
    ++counts[i];  // i == bounds.size(): only in +Inf
  }
  ClientMetric ToMetric(std::vector<ClientMetric::Label> labels,
                        absl::Span<const double> bounds) const {
    ClientMetric m;
    m.label = std::move(labels);
    m.histogram.sample_count = count;
    m.histogram.sample_sum = sum;
    uint64_t cumulative = 0;
    for (size_t i = 0; i < bounds.size(); ++i) {
      cumulative += counts[i];
      m.histogram.bucket.push_back({cumulative, bounds[i]});
    }
    return m;
  }
};

// Per preemption mode: hosts, and those of them at worst risk stall.
struct KernelCount {
  std::array<uint64_t, kPreempts> hosts{};
  std::array<uint64_t, kPreempts> stall{};
};
using KernelCounts = absl::flat_hash_map<std::string, KernelCount>;

// tracehealth_fleet_kernel_hosts: the kMaxKernelSeries (release, preemption)
// pairs with the most hosts; the others summed per preemption mode as
// kernel="other". A host without a release counts as kernel="unknown".
// tracehealth_fleet_kernel_stall_hosts: of those hosts, the ones at worst
// risk stall, for the same (kernel, preempt) series.
void AppendKernelFamilies(const KernelCounts& kernels,
                          std::vector<MetricFamily>* out) {
  struct Series {
    uint64_t hosts;
    uint64_t stall;
    const std::string* release;
    int preempt;
  };
  std::vector<Series> all;
  for (const auto& [release, counts] : kernels) {
    for (int p = 0; p < kPreempts; ++p) {
      if (counts.hosts[p] > 0)
        all.push_back({counts.hosts[p], counts.stall[p], &release, p});
    }
  }
  std::sort(all.begin(), all.end(), [](const Series& a, const Series& b) {
    if (a.hosts != b.hosts) return a.hosts > b.hosts;
    if (*a.release != *b.release) return *a.release < *b.release;
    return a.preempt < b.preempt;
  });
  MetricFamily f = Family("tracehealth_fleet_kernel_hosts",
                          "Hosts by kernel release and preemption mode.");
  MetricFamily stall =
      Family("tracehealth_fleet_kernel_stall_hosts",
             "Hosts at worst risk stall, by kernel release and preemption "
             "mode (the series of tracehealth_fleet_kernel_hosts).");
  std::array<uint64_t, kPreempts> other{}, other_stall{};
  for (size_t i = 0; i < all.size(); ++i) {
    if (i >= kMaxKernelSeries) {
      other[all[i].preempt] += all[i].hosts;
      other_stall[all[i].preempt] += all[i].stall;
      continue;
    }
    const std::vector<ClientMetric::Label> labels = {
        {"kernel", all[i].release->empty() ? "unknown" : *all[i].release},
        {"preempt", PreemptLabel(all[i].preempt)}};
    AddGauge(f, labels, static_cast<double>(all[i].hosts));
    AddGauge(stall, labels, static_cast<double>(all[i].stall));
  }
  for (int p = 0; p < kPreempts; ++p) {
    if (other[p] > 0) {
      AddGauge(f, {{"kernel", "other"}, {"preempt", PreemptLabel(p)}},
               static_cast<double>(other[p]));
      AddGauge(stall, {{"kernel", "other"}, {"preempt", PreemptLabel(p)}},
               static_cast<double>(other_stall[p]));
    }
  }
  out->push_back(std::move(f));
  out->push_back(std::move(stall));
}

// A host as ranked for per-host series.
struct Candidate {
  v1::Risk risk;
  std::optional<double> margin;
  double latency;
  std::string host_id;
};

bool Worse(const Candidate& a, const Candidate& b) {
  if (a.risk != b.risk) return a.risk > b.risk;
  if (a.margin.has_value() != b.margin.has_value()) return a.margin.has_value();
  if (a.margin != b.margin) return *a.margin > *b.margin;
  if (a.latency != b.latency) return a.latency > b.latency;
  return a.host_id < b.host_id;
}

double MaxLatency(const HostRecord& r) {
  double m = 0;
  for (const StoredAttach& a : r.attach) {
    if (a.present) m = std::max(m, a.latency_seconds);
  }
  return m;
}

const char* const kCheckLabels[kStoredChecks] = {"soft_lockup", "rcu_stall",
                                                 "latency"};

// The per-host families, filled host by host.
struct HostFamilies {
  MetricFamily latency = Family(host_metric::kAttachLatency);
  MetricFamily margin = Family(host_metric::kAttachMargin);
  MetricFamily budget = Family(host_metric::kPoolBudget);
  MetricFamily exhaustion = Family(host_metric::kSecondsToExhaustion);
  MetricFamily purge = Family(host_metric::kPurgeSeconds);
  MetricFamily purge_margin = Family(host_metric::kPurgeMargin);
  MetricFamily last =
      Family("tracehealth_host_last_report_timestamp_seconds",
             "When the server last stored a report of the host.");
  MetricFamily interval = Family(host_metric::kReportInterval);
  MetricFamily threads = Family(host_metric::kThreads);
  MetricFamily dropped = Family(host_metric::kSpoolDropped);
  MetricFamily risk = Family(host_metric::kRisk);
  MetricFamily stale =
      Family("tracehealth_host_stale",
             "1 when the host missed its last report intervals.");

  void Add(const std::string& host, const HostEntry& e, bool is_stale) {
    const HostRecord& r = e.record;
    for (int k = 0; k < kProbeKinds; ++k) {
      const StoredAttach& a = r.attach[k];
      if (!a.present) continue;
      std::string kind = ProbeKindMetricLabel(
          static_cast<v1::ProbeKind>(v1::PROBE_KIND_FUNCTION_GRAPH_TRACER + k));
      AddGauge(latency, {{"host", host}, {"probe_kind", kind}},
               a.latency_seconds);
      for (int c = 0; c < kStoredChecks; ++c) {
        std::optional<double> m = a.margin(static_cast<StoredCheck>(c));
        if (!m) continue;
        AddGauge(
            margin,
            {{"check", kCheckLabels[c]}, {"host", host}, {"probe_kind", kind}},
            *m);
      }
    }
    if (r.pool_budget_ratio)
      AddGauge(budget, {{"host", host}}, *r.pool_budget_ratio);
    if (r.seconds_to_exhaustion)
      AddGauge(exhaustion, {{"host", host}}, *r.seconds_to_exhaustion);
    if (r.vmap_applies) AddGauge(purge, {{"host", host}}, r.purge_seconds);
    if (r.purge_lockup_margin)
      AddGauge(purge_margin, {{"host", host}}, *r.purge_lockup_margin);
    if (r.interval_seconds > 0)
      AddGauge(interval, {{"host", host}}, r.interval_seconds);
    if (std::optional<uint64_t> t = r.threads())
      AddGauge(threads, {{"host", host}}, static_cast<double>(*t));
    ClientMetric d;
    d.label = {{"host", host}};
    d.counter.value = static_cast<double>(r.spool_dropped_total);
    dropped.metric.push_back(std::move(d));
    AddGauge(last, {{"host", host}},
             absl::ToDoubleSeconds(e.last_seen - absl::UnixEpoch()));
    AddGauge(risk, {{"host", host}}, static_cast<double>(r.worst_risk));
    AddGauge(stale, {{"host", host}}, is_stale ? 1 : 0);
  }

  void MoveTo(std::vector<MetricFamily>* out) {
    for (MetricFamily* f :
         {&latency, &margin, &budget, &exhaustion, &purge, &purge_margin, &last,
          &interval, &threads, &dropped, &risk, &stale}) {
      out->push_back(std::move(*f));
    }
  }
};

// The fleet's aggregates, counted host by host.
struct FleetCounts {
  std::array<uint64_t, kRisks> by_risk{};
  uint64_t stale = 0;
  // Release -> hosts per preemption mode.
  KernelCounts kernels;
  std::array<std::array<uint64_t, kRisks>, kProbeKinds> attach_risk{};
  std::array<Histogram, kProbeKinds> latency{}, margin{};

  void Count(const HostRecord& r, bool is_stale) {
    by_risk[std::clamp<int>(r.worst_risk, 0, kRisks - 1)]++;
    stale += is_stale;
    const int preempt =
        std::clamp<int>(r.inputs.preempt_mode, 0, kPreempts - 1);
    // Empty without a release.
    const std::string& release = r.inputs.release();
    auto k = kernels.find(release);
    if (k == kernels.end()) k = kernels.try_emplace(release).first;
    k->second.hosts[preempt]++;
    k->second.stall[preempt] += r.worst_risk >= v1::RISK_STALL;
    for (int i = 0; i < kProbeKinds; ++i) {
      const StoredAttach& a = r.attach[i];
      if (!a.present) continue;
      attach_risk[i][std::clamp<int>(a.risk, 0, kRisks - 1)]++;
      latency[i].Observe(a.latency_seconds, kLatencyBuckets);
      std::optional<double> soft = a.margin(kSoftLockup);
      std::optional<double> rcu = a.margin(kRcuStall);
      if (soft || rcu) {
        margin[i].Observe(std::max(soft.value_or(0), rcu.value_or(0)),
                          kMarginBuckets);
      }
    }
  }

  void AppendTo(std::vector<MetricFamily>* out) const;
};

void FleetCounts::AppendTo(std::vector<MetricFamily>* out) const {
  MetricFamily hosts =
      Family("tracehealth_fleet_hosts", "Hosts by their worst predicted risk.");
  for (int i = 0; i < kRisks; ++i) {
    AddGauge(hosts, {{"risk", RiskMetricLabel(static_cast<v1::Risk>(i))}},
             static_cast<double>(by_risk[i]));
  }
  out->push_back(std::move(hosts));
  MetricFamily stale_hosts =
      Family("tracehealth_fleet_stale_hosts",
             "Hosts that missed their last report intervals.");
  AddGauge(stale_hosts, {}, static_cast<double>(stale));
  out->push_back(std::move(stale_hosts));
  AppendKernelFamilies(kernels, out);
  MetricFamily risks = Family("tracehealth_fleet_attach_risk_hosts",
                              "Hosts by the predicted risk of a probe kind's "
                              "first attach.");
  MetricFamily lat = Family("tracehealth_fleet_attach_latency_seconds",
                            "Predicted latency of a probe kind's first attach, "
                            "over the fleet's hosts.",
                            prometheus::MetricType::Histogram);
  MetricFamily mar = Family(
      "tracehealth_fleet_attach_stall_margin_ratio",
      "Largest soft-lockup or RCU-stall margin of a probe kind's first attach "
      "(> 1: crossed), over the hosts where one applies.",
      prometheus::MetricType::Histogram);
  for (int i = 0; i < kProbeKinds; ++i) {
    const std::string kind = ProbeKindMetricLabel(
        static_cast<v1::ProbeKind>(v1::PROBE_KIND_FUNCTION_GRAPH_TRACER + i));
    for (int r = 0; r < kRisks; ++r) {
      AddGauge(risks,
               {{"probe_kind", kind},
                {"risk", RiskMetricLabel(static_cast<v1::Risk>(r))}},
               static_cast<double>(attach_risk[i][r]));
    }
    lat.metric.push_back(
        latency[i].ToMetric({{"probe_kind", kind}}, kLatencyBuckets));
    mar.metric.push_back(
        margin[i].ToMetric({{"probe_kind", kind}}, kMarginBuckets));
  }
  out->push_back(std::move(risks));
  out->push_back(std::move(lat));
  out->push_back(std::move(mar));
}

}  // namespace

HostCollector::HostCollector(const HostIndex* index, HostMetricsOptions options)
    : index_(index), options_(std::move(options)) {}

bool HostCollector::IsStale(const HostEntry& e, absl::Time now) const {
  const double interval =
      e.record.interval_seconds > 0 ? e.record.interval_seconds : 60;
  return absl::ToDoubleSeconds(now - e.last_seen) >
         interval * options_.stale_after_intervals;
}

std::vector<MetricFamily> HostCollector::Collect() const {
  const absl::Time now = options_.now();
  FleetCounts fleet;
  // The worst hosts that need attention: a heap whose top is the least bad.
  std::vector<Candidate> top;
  uint64_t eligible = 0;
  const size_t max_hosts = options_.max_hosts;
  index_->ForEach([&](const std::string& id, const HostEntry& e) {
    const HostRecord& r = e.record;
    const bool is_stale = IsStale(e, now);
    fleet.Count(r, is_stale);
    if (r.worst_risk < options_.host_min_risk && !is_stale &&
        r.spool_dropped_total == 0) {
      return;
    }
    ++eligible;
    if (max_hosts == 0) return;
    Candidate c{r.worst_risk, r.worst_margin, MaxLatency(r), std::string()};
    if (top.size() == max_hosts) {
      c.host_id = id;
      if (!Worse(c, top.front())) return;
      std::pop_heap(top.begin(), top.end(), Worse);
      top.back() = std::move(c);
    } else {
      c.host_id = id;
      top.push_back(std::move(c));
    }
    std::push_heap(top.begin(), top.end(), Worse);
  });

  std::vector<MetricFamily> out;
  fleet.AppendTo(&out);

  // The selected hosts' own series, worst first.
  std::sort_heap(top.begin(), top.end(), Worse);
  HostFamilies per_host;
  for (const Candidate& c : top) {
    index_->Visit(c.host_id, [&](const HostEntry& e) {
      per_host.Add(c.host_id, e, IsStale(e, now));
    });
  }
  MetricFamily exported =
      Family("tracehealth_metrics_host_series_hosts",
             "Hosts whose own series this scrape has (--metrics_max_hosts).");
  AddGauge(exported, {}, static_cast<double>(top.size()));
  out.push_back(std::move(exported));
  MetricFamily omitted = Family(
      "tracehealth_metrics_host_series_omitted_hosts",
      "Hosts that need attention (risk at least --metrics_host_min_risk, "
      "stale, or dropping reports) without series of their own, beyond "
      "--metrics_max_hosts; the query API and the page have them.");
  AddGauge(omitted, {}, static_cast<double>(eligible - top.size()));
  out.push_back(std::move(omitted));
  per_host.MoveTo(&out);
  return out;
}

}  // namespace tracehealth::server
