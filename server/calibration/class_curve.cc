#include "server/calibration/class_curve.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "common/models/calibrated_constants.h"
#include "server/calibration/median.h"

namespace tracehealth::server {

namespace {

WalkCost WalkOf(const CanaryWalk& c, const std::vector<VisitLevel>& levels) {
  return ShadowStackWalk(c.total_threads, c.fresh_threads, c.batch,
                         NullPlacement::kTail, levels);
}

}  // namespace

std::optional<CanaryWalk> CanaryWalkOf(const v1::Calibration& c) {
  if (c.total_threads() == 0 || c.fresh_threads() == 0 || c.batch() == 0 ||
      c.fresh_threads() > c.total_threads() || !(c.c_visit_seconds() > 0)) {
    return std::nullopt;
  }
  CanaryWalk w;
  w.total_threads = c.total_threads();
  w.fresh_threads = c.fresh_threads();
  w.batch = c.batch();
  const WalkCost walk = WalkOf(w, ConstantsOf(c).visit_levels);
  w.seconds_per_visit =
      c.c_visit_seconds() * walk.weighted_visits / walk.visits;
  return w;
}

ClassCurve FitClassCurve(std::vector<CanaryWalk> canaries) {
  canaries.erase(std::remove_if(canaries.begin(), canaries.end(),
                                [](const CanaryWalk& c) {
                                  return !(c.seconds_per_visit > 0) ||
                                         c.total_threads == 0;
                                }),
                 canaries.end());
  ClassCurve curve;
  if (canaries.empty()) return curve;
  std::sort(canaries.begin(), canaries.end(),
            [](const CanaryWalk& a, const CanaryWalk& b) {
              return a.total_threads < b.total_threads;
            });
  // The points: runs within kSamePoint of their smallest.
  struct Point {
    CanaryWalk walk;  // the run's largest; its price the run's median
  };
  std::vector<Point> points;
  for (size_t i = 0; i < canaries.size();) {
    size_t j = i;
    std::vector<double> prices;
    while (j < canaries.size() &&
           static_cast<double>(canaries[j].total_threads) <=
               kSamePoint * static_cast<double>(canaries[i].total_threads)) {
      prices.push_back(canaries[j].seconds_per_visit);
      ++j;
    }
    Point p{canaries[j - 1]};
    p.walk.seconds_per_visit = Median(std::move(prices));
    points.push_back(p);
    i = j;
  }
  curve.points = static_cast<int>(points.size());
  curve.min_threads = points.front().walk.total_threads;
  curve.max_threads = points.back().walk.total_threads;
  curve.c_visit_seconds = points.front().walk.seconds_per_visit;
  double factor = 1;
  for (size_t k = 1; k < points.size(); ++k) {
    const CanaryWalk& w = points[k].walk;
    const double from =
        std::sqrt(static_cast<double>(points[k - 1].walk.total_threads) *
                  static_cast<double>(w.total_threads));
    const WalkCost so_far = WalkOf(w, curve.levels);
    // The visits of the passes from `from` up: a level of factor 2 there
    // adds them once more.
    const double above =
        WalkOf(w, {{from, 2.0}}).weighted_visits - so_far.visits;
    if (!(above > 0)) continue;
    const double target =
        w.seconds_per_visit / curve.c_visit_seconds * so_far.visits;
    const double next = factor + (target - so_far.weighted_visits) / above;
    if (!(next > factor)) continue;  // never cheaper for a bigger pass
    curve.levels.push_back({from, next});
    factor = next;
  }
  return curve;
}

}  // namespace tracehealth::server
