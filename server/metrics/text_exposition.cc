#include "server/metrics/text_exposition.h"

#include "prometheus/metric_family.h"
#include "prometheus/text_serializer.h"

namespace tracehealth::server {

std::string SerializeMetrics(
    const std::vector<std::shared_ptr<prometheus::Collectable>>& collectables) {
  std::vector<prometheus::MetricFamily> families;
  for (const auto& c : collectables) {
    if (c == nullptr) continue;
    std::vector<prometheus::MetricFamily> f = c->Collect();
    families.insert(families.end(), std::make_move_iterator(f.begin()),
                    std::make_move_iterator(f.end()));
  }
  return prometheus::TextSerializer().Serialize(families);
}

}  // namespace tracehealth::server
