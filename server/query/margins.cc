#include "server/query/margins.h"

#include <algorithm>

namespace tracehealth::server {

std::vector<v1::MarginCell> MarginStrip(std::vector<MarginHost> hosts,
                                        uint32_t cells) {
  std::vector<v1::MarginCell> strip;
  if (cells == 0 || hosts.empty()) return strip;
  std::sort(hosts.begin(), hosts.end(), [](const auto& a, const auto& b) {
    if (a.worst_margin.has_value() != b.worst_margin.has_value())
      return a.worst_margin.has_value();
    if (a.worst_margin != b.worst_margin)
      return *a.worst_margin > *b.worst_margin;
    return a.host_id < b.host_id;
  });
  const size_t per_cell = (hosts.size() + cells - 1) / cells;
  for (size_t i = 0; i < hosts.size(); i += per_cell) {
    v1::MarginCell* cell = &strip.emplace_back();
    cell->set_first_host_id(hosts[i].host_id);
    const size_t end = std::min(hosts.size(), i + per_cell);
    cell->set_hosts(static_cast<uint32_t>(end - i));
    for (size_t j = i; j < end; ++j) {
      const MarginHost& h = hosts[j];
      if (h.worst_risk > cell->worst_risk()) cell->set_worst_risk(h.worst_risk);
      if (!h.worst_margin.has_value()) continue;
      // Sorted: the first margin seen is the largest, the last the smallest.
      if (!cell->has_max_margin()) cell->set_max_margin(*h.worst_margin);
      cell->set_min_margin(*h.worst_margin);
    }
  }
  return strip;
}

}  // namespace tracehealth::server
