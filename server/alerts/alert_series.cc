#include "server/alerts/alert_series.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/strip.h"
#include "common/metric_family.h"

namespace tracehealth::server {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;

bool Exported(const AlertBrief& a) {
  return a.state == v1::ALERT_STATE_FIRING ||
         a.state == v1::ALERT_STATE_PENDING;
}

}  // namespace

std::string AlertStateLabel(v1::AlertState s) {
  return absl::AsciiStrToLower(
      absl::StripPrefix(v1::AlertState_Name(s), "ALERT_STATE_"));
}

bool HostAlertRank::operator<(const HostAlertRank& o) const {
  return std::tie(state, severity, active_since_ns, host_id) <
         std::tie(o.state, o.severity, o.active_since_ns, o.host_id);
}

HostAlertRank RankOf(const AlertBrief& a) {
  HostAlertRank r;
  r.state = a.state == v1::ALERT_STATE_FIRING ? 0 : 1;
  r.severity = a.severity == "critical" ? 0 : a.severity == "warning" ? 1 : 2;
  r.active_since_ns = a.active_since_ns;
  r.host_id = a.host_id;
  return r;
}

std::vector<MetricFamily> AlertSeries(absl::Span<const AlertBrief> alerts,
                                      size_t max_hosts) {
  // (rule, state, severity) -> alerts; each host's worst alert.
  absl::flat_hash_map<
      std::tuple<absl::string_view, v1::AlertState, absl::string_view>,
      uint64_t>
      counts;
  absl::flat_hash_map<absl::string_view, HostAlertRank> worst;
  for (const AlertBrief& a : alerts) {
    if (!Exported(a)) continue;
    ++counts[{a.rule, a.state, a.severity}];
    HostAlertRank r = RankOf(a);
    auto [it, inserted] = worst.try_emplace(a.host_id, r);
    if (!inserted && r < it->second) it->second = std::move(r);
  }

  MetricFamily by_rule =
      Family("tracehealth_alert_hosts",
             "Pending or firing alerts of the server's rule engine, by rule, "
             "state and severity (one alert per rule and host).");
  std::vector<std::pair<decltype(counts)::key_type, uint64_t>> sorted(
      counts.begin(), counts.end());
  std::sort(sorted.begin(), sorted.end());
  for (const auto& [key, n] : sorted) {
    const auto& [rule, state, severity] = key;
    AddGauge(by_rule,
             {{"alertname", std::string(rule)},
              {"alertstate", AlertStateLabel(state)},
              {"severity", std::string(severity)}},
             static_cast<double>(n));
  }

  // The max_hosts worst hosts, worst first.
  std::vector<HostAlertRank> hosts;
  hosts.reserve(worst.size());
  for (auto& [host, rank] : worst) hosts.push_back(std::move(rank));
  const size_t keep = std::min(max_hosts, hosts.size());
  std::partial_sort(hosts.begin(), hosts.begin() + keep, hosts.end());
  absl::flat_hash_map<absl::string_view, size_t> position;
  for (size_t i = 0; i < keep; ++i) position[hosts[i].host_id] = i;
  std::vector<std::pair<size_t, const AlertBrief*>> selected;
  for (const AlertBrief& a : alerts) {
    if (!Exported(a)) continue;
    auto p = position.find(a.host_id);
    if (p != position.end()) selected.push_back({p->second, &a});
  }
  std::sort(selected.begin(), selected.end(), [](const auto& x, const auto& y) {
    if (x.first != y.first) return x.first < y.first;
    return x.second->rule < y.second->rule;
  });
  MetricFamily per_host = Family(
      "tracehealth_alerts",
      "1 per pending or firing alert of the server's rule engine, for the "
      "--metrics_max_hosts hosts with the worst alerts (firing, critical, "
      "longest active first).");
  for (const auto& [pos, a] : selected) {
    AddGauge(per_host,
             {{"alertname", a->rule},
              {"alertstate", AlertStateLabel(a->state)},
              {"host", a->host_id},
              {"severity", a->severity}},
             1);
  }
  MetricFamily omitted = Family(
      "tracehealth_alerts_omitted_hosts",
      "Hosts with a pending or firing alert that have no tracehealth_alerts "
      "series (over --metrics_max_hosts); tracehealth_alert_hosts counts "
      "them.");
  AddGauge(omitted, {}, static_cast<double>(hosts.size() - keep));
  std::vector<MetricFamily> out;
  out.push_back(std::move(per_host));
  out.push_back(std::move(by_rule));
  out.push_back(std::move(omitted));
  return out;
}

}  // namespace tracehealth::server
