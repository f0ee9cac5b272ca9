#include "server/query/margins.h"

#include <algorithm>

namespace tracehealth::server {
namespace {

void Consider(
    const google::protobuf::RepeatedPtrField<v1::ThresholdCheck>& checks,
    std::optional<double>* worst) {
  for (const v1::ThresholdCheck& c : checks) {
    if (!c.applies()) continue;
    if (!worst->has_value() || c.margin() > **worst) *worst = c.margin();
  }
}

}  // namespace

std::optional<double> WorstMargin(const v1::Predictions& p) {
  std::optional<double> worst;
  for (const v1::AttachPrediction& a : p.attach()) Consider(a.checks(), &worst);
  Consider(p.stack_depot().checks(), &worst);
  Consider(p.vmap_purge().checks(), &worst);
  return worst;
}

std::vector<v1::MarginCell> MarginStrip(std::vector<v1::HostSummary> hosts,
                                        uint32_t cells) {
  std::vector<v1::MarginCell> strip;
  if (cells == 0 || hosts.empty()) return strip;
  std::sort(hosts.begin(), hosts.end(), [](const auto& a, const auto& b) {
    if (a.has_worst_margin() != b.has_worst_margin())
      return a.has_worst_margin();
    if (a.worst_margin() != b.worst_margin())
      return a.worst_margin() > b.worst_margin();
    return a.host_id() < b.host_id();
  });
  const size_t per_cell = (hosts.size() + cells - 1) / cells;
  for (size_t i = 0; i < hosts.size(); i += per_cell) {
    v1::MarginCell* cell = &strip.emplace_back();
    cell->set_first_host_id(hosts[i].host_id());
    const size_t end = std::min(hosts.size(), i + per_cell);
    cell->set_hosts(static_cast<uint32_t>(end - i));
    for (size_t j = i; j < end; ++j) {
      const v1::HostSummary& h = hosts[j];
      if (h.worst_risk() > cell->worst_risk())
        cell->set_worst_risk(h.worst_risk());
      if (!h.has_worst_margin()) continue;
      // Sorted: the first margin seen is the largest, the last the smallest.
      if (!cell->has_max_margin()) cell->set_max_margin(h.worst_margin());
      cell->set_min_margin(h.worst_margin());
    }
  }
  return strip;
}

}  // namespace tracehealth::server
