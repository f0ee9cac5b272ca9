#include "common/models/fgraph/calibration_math.h"

#include <algorithm>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace tracehealth {
namespace {

// What c_visit multiplies in one pass over `tasks` tasks.
double OnePassVisits(uint64_t tasks, const std::vector<VisitLevel>& levels) {
  const double n = static_cast<double>(tasks);
  return VisitFactor(levels, n) * n;
}

}  // namespace

CalibrationWalk PredictCalibrationWalk(const CalibrationHost& host, uint64_t k,
                                       const WalkConstants& c,
                                       double fixed_seconds) {
  CalibrationWalk w;
  w.total_threads = host.threads + k;
  w.fresh_threads =
      std::min(w.total_threads, std::min(host.null_threads, host.threads) + k);
  // The new threads are the newest: at the tail, the model's worst case.
  w.walk = ShadowStackWalk(w.total_threads, w.fresh_threads, host.batch,
                           NullPlacement::kTail, c.levels);
  w.seconds = fixed_seconds + WalkSeconds(w.walk, w.fresh_threads, c);
  return w;
}

uint64_t ChooseCalibrationThreads(const CalibrationHost& host,
                                  double budget_seconds, uint64_t max_threads,
                                  const WalkConstants& c,
                                  double fixed_seconds) {
  auto fits = [&](uint64_t k) {
    return PredictCalibrationWalk(host, k, c, fixed_seconds).seconds <=
           budget_seconds;
  };
  if (max_threads == 0 || !fits(1)) return 0;
  // The walk grows with K: bisect for the last K that fits.
  uint64_t lo = 1, hi = max_threads;
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo + 1) / 2;
    if (fits(mid)) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

absl::StatusOr<DerivedConstants> FitCalibration(
    const std::vector<CalibrationPoint>& points, uint32_t batch,
    const WalkConstants& assumed) {
  if (points.empty()) {
    return absl::FailedPreconditionError("no enable was timed");
  }
  // Per point: X, Y, d and the weight 1 / first^2 (a timing's noise grows
  // with the time timed).
  struct Row {
    double x, y, d, w;
  };
  std::vector<Row> rows;
  for (const CalibrationPoint& p : points) {
    const WalkCost walk =
        ShadowStackWalk(p.total_threads, p.fresh_threads, batch,
                        NullPlacement::kTail, assumed.levels);
    // The second enable's one pass over N_total, at its level's factor.
    const double one_pass = OnePassVisits(p.total_threads, assumed.levels);
    const double x = walk.weighted_visits - one_pass;
    if (x <= 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the first enable walks no more than one pass (", p.fresh_threads,
          " threads without a shadow stack of ", p.total_threads, ")"));
    }
    const double d = p.first_seconds - p.second_seconds -
                     assumed.c_alloc * static_cast<double>(p.fresh_threads);
    if (!(d > 0)) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "the first enable (%.3f ms) was not slower than the second (%.3f "
          "ms) by more than the assumed allocation cost: no walk measured",
          p.first_seconds * 1e3, p.second_seconds * 1e3));
    }
    rows.push_back({x, static_cast<double>(walk.passes) - 1, d,
                    1 / (p.first_seconds * p.first_seconds)});
  }
  DerivedConstants out;
  double sxx = 0, sxy = 0, syy = 0, sxd = 0, syd = 0;
  for (const Row& r : rows) {
    sxx += r.w * r.x * r.x;
    sxy += r.w * r.x * r.y;
    syy += r.w * r.y * r.y;
    sxd += r.w * r.x * r.d;
    syd += r.w * r.y * r.d;
  }
  const double det = sxx * syy - sxy * sxy;
  // Two or more points whose X / Y differ enough to tell the two apart.
  if (rows.size() >= 2 && det > 1e-9 * sxx * syy) {
    const double c_visit = (sxd * syy - syd * sxy) / det;
    const double c_pass = (syd * sxx - sxd * sxy) / det;
    if (c_visit > 0 && c_pass >= 0) {
      out.c_visit_seconds = c_visit;
      out.c_pass_seconds = c_pass;
      out.c_pass_fitted = true;
    }
  }
  if (!out.c_pass_fitted) {
    out.c_pass_seconds = assumed.c_pass;
    double num = 0;
    for (const Row& r : rows) num += r.w * r.x * (r.d - assumed.c_pass * r.y);
    out.c_visit_seconds = num / sxx;
    if (!(out.c_visit_seconds > 0)) {
      const CalibrationPoint& p = points.back();
      return absl::FailedPreconditionError(absl::StrFormat(
          "the first enable (%.3f ms) was not slower than the second (%.3f "
          "ms) by more than the assumed pass and allocation costs: no walk "
          "measured",
          p.first_seconds * 1e3, p.second_seconds * 1e3));
    }
  }
  double fixed = 0;
  for (const CalibrationPoint& p : points) {
    fixed +=
        p.second_seconds -
        out.c_visit_seconds * OnePassVisits(p.total_threads, assumed.levels) -
        out.c_pass_seconds;
  }
  out.fixed_seconds = std::max(0.0, fixed / static_cast<double>(points.size()));
  return out;
}

}  // namespace tracehealth
