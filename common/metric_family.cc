#include "common/metric_family.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/strip.h"

namespace tracehealth {

prometheus::MetricFamily Family(std::string name, std::string help,
                                prometheus::MetricType type) {
  prometheus::MetricFamily f;
  f.name = std::move(name);
  f.help = std::move(help);
  f.type = type;
  return f;
}

prometheus::MetricFamily Family(const MetricSpec& spec) {
  return Family(spec.name, spec.help, spec.type);
}

void AddGauge(prometheus::MetricFamily& f,
              std::vector<prometheus::ClientMetric::Label> labels,
              double value) {
  prometheus::ClientMetric m;
  m.label = std::move(labels);
  m.gauge.value = value;
  f.metric.push_back(std::move(m));
}

std::string ProbeKindMetricLabel(v1::ProbeKind kind) {
  return absl::AsciiStrToLower(
      absl::StripPrefix(v1::ProbeKind_Name(kind), "PROBE_KIND_"));
}

std::string RiskMetricLabel(v1::Risk risk) {
  return absl::AsciiStrToLower(absl::StripPrefix(v1::Risk_Name(risk), "RISK_"));
}

}  // namespace tracehealth
