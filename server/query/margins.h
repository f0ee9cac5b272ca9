// Margins (predicted / threshold) of a host's predictions, and the margin
// strip of FleetSummary: every host drawn by its worst margin.
#ifndef TRACEHEALTH_SERVER_QUERY_MARGINS_H_
#define TRACEHEALTH_SERVER_QUERY_MARGINS_H_

#include <optional>
#include <vector>

#include "proto/tracehealth/v1/predictions.pb.h"
#include "proto/tracehealth/v1/query.pb.h"

namespace tracehealth::server {

// The largest margin over the threshold checks that apply, of every attach
// prediction, the stack depot and the vmap purge; nullopt when none applies.
std::optional<double> WorstMargin(const v1::Predictions& p);

// Orders `hosts` by worst margin (largest first, hosts without one last,
// ties by host id) and groups them into at most `cells` cells of
// ceil(n / cells) hosts each (the last may hold fewer). No cells for 0.
std::vector<v1::MarginCell> MarginStrip(std::vector<v1::HostSummary> hosts,
                                        uint32_t cells);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_QUERY_MARGINS_H_
