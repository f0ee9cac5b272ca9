// The margin strip of FleetSummary: every host drawn by its worst margin
// (predicted / threshold; host_record.h WorstMargin).
#ifndef TRACEHEALTH_SERVER_QUERY_MARGINS_H_
#define TRACEHEALTH_SERVER_QUERY_MARGINS_H_

#include <optional>
#include <string>
#include <vector>

#include "proto/tracehealth/v1/predictions.pb.h"
#include "proto/tracehealth/v1/query.pb.h"

namespace tracehealth::server {

// What the strip needs of a host.
struct MarginHost {
  std::string host_id;
  std::optional<double> worst_margin;
  v1::Risk worst_risk = v1::RISK_UNKNOWN;
};

// Orders `hosts` by worst margin (largest first, hosts without one last,
// ties by host id) and groups them into at most `cells` cells of
// ceil(n / cells) hosts each (the last may hold fewer). No cells for 0.
std::vector<v1::MarginCell> MarginStrip(std::vector<MarginHost> hosts,
                                        uint32_t cells);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_QUERY_MARGINS_H_
