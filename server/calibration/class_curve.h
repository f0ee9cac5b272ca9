// A hardware class's price of a visit by the size of the walk, fitted
// through its canaries' calibrations (docs/design.md §13.2).
//
// A visit costs more once the tasks a pass walks no longer fit a cache
// level, so canaries calibrated at different thread counts measure
// different prices of a visit; a median of them prices every host of the
// class as if it walked as many threads as the middle canary. Instead each
// canary gives one point — the threads its largest calibration point
// walked (N_total) and its price of a visit averaged over that walk — and
// the class's levels (fgraph_walk.h VisitLevel) are fitted through the
// points, smallest first:
//
//   c_visit = the price at the fewest threads;
//   level k starts at sqrt(N_{k-1} * N_k) (where between two measured sizes
//   the price changed is not known: the middle on a log scale), and its
//   factor is the one that makes the model's walk of point k, priced with
//   c_visit and the levels before it, cost exactly point k's price times
//   its visits:
//     factor_k = factor_{k-1} + (p_k / c_visit * V_k - W_k) / A_k
//   with V_k the walk's visits, W_k its weighted visits under the levels so
//   far and A_k the visits of its passes of from_k tasks or more.
//
// So each point's own walk is priced as it was measured; beyond the largest
// point the last factor holds (the price is not extrapolated upward). A
// factor below the one before (a bigger walk measured cheaper: noise) is
// not a level: a price never falls with the size of the pass. Canaries
// whose N_total lie within kSamePoint of the smallest of their run are one
// point: the median of their prices, at the walk of the largest of them.
//
// Thread safety: pure functions.
#ifndef TRACEHEALTH_SERVER_CALIBRATION_CLASS_CURVE_H_
#define TRACEHEALTH_SERVER_CALIBRATION_CLASS_CURVE_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "common/models/fgraph/fgraph_walk.h"
#include "proto/tracehealth/v1/calibration.pb.h"

namespace tracehealth::server {

// Thread counts within this ratio of a run's smallest are one point.
inline constexpr double kSamePoint = 1.25;

// One canary's point: the walk of its calibration's largest point and its
// price of a visit over that walk.
struct CanaryWalk {
  uint64_t total_threads = 0;  // N_total: the tasks the passes walk
  uint64_t fresh_threads = 0;  // N_fresh: without a stack, at the tail
  uint32_t batch = 0;
  // c_visit times the walk's weighted visits over its visits, under the
  // canary's own levels (its user-space walk): the price of a visit
  // averaged over the walk; c_visit itself without levels.
  double seconds_per_visit = 0;
};

// The point of `c` (its top-level total_threads, fresh_threads, batch, and
// c_visit_seconds with ConstantsOf(c)'s levels); nullopt when `c` does not
// say (a thread count or the batch is 0, fresh above total, c_visit not
// positive).
std::optional<CanaryWalk> CanaryWalkOf(const v1::Calibration& c);

struct ClassCurve {
  // The price of a visit at the fewest threads (0: no point).
  double c_visit_seconds = 0;
  // Sorted by from_tasks, factors growing; empty: one price.
  std::vector<VisitLevel> levels;
  // The points the curve goes through, and their thread counts.
  int points = 0;
  uint64_t min_threads = 0;
  uint64_t max_threads = 0;
};

// The curve through `canaries` (see above); points with a price that is not
// positive are left out.
ClassCurve FitClassCurve(std::vector<CanaryWalk> canaries);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_CALIBRATION_CLASS_CURVE_H_
