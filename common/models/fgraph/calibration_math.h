// The arithmetic of a calibration (tracehealth-agent --calibrate): which
// thread count keeps its walk under a budget, and the per-visit, per-pass
// and fixed costs timed enables of function_graph give (docs/design.md
// §13.1).
//
// A calibration measures one or more points. At each, the first enable
// hands a stack to each of the N_fresh threads without one (the K the
// calibration started after its warm-up enable, forked last, so at the tail
// of the task list); the second, with every stack in place, walks the list
// once:
//   first  = fixed + c_visit * V1 + c_pass * P1 + c_alloc * N_fresh
//   second = fixed + c_visit * N_total + c_pass
// with V1, P1 = ShadowStackWalk(N_total, N_fresh, B, tail). So each point
// gives, with X = V1 - N_total (visits beyond one pass) and Y = P1 - 1
// (passes beyond one),
//   d = first - second - c_alloc * N_fresh = c_visit * X + c_pass * Y.
// c_alloc keeps its assumed value (it is collinear with c_pass: P1 grows
// as N_fresh / B). With two or more points whose X / Y differ, c_visit and
// c_pass are the weighted least-squares fit of those equations, each point
// weighted by w = 1 / first^2 (a timing's noise grows with the time timed,
// so every point counts by its relative error); a fit whose c_pass comes out
// negative (noise the points cannot resolve) is not taken. Otherwise, and with
// one point, c_pass keeps its assumed value and
//   c_visit = sum(w X (d - c_pass Y)) / sum(w X^2)
// which for one point is (d - c_pass * Y) / X. Then
//   fixed = mean over the points of (second - c_visit * N_total - c_pass),
// at least 0. With visit levels (fgraph_walk.h), V1 is the walk's
// weighted_visits and N_total counts at its level's factor in X, second and
// fixed: c_visit is then the price at factor 1.
//
// Thread safety: pure functions.
#ifndef TRACEHEALTH_COMMON_MODELS_FGRAPH_CALIBRATION_MATH_H_
#define TRACEHEALTH_COMMON_MODELS_FGRAPH_CALIBRATION_MATH_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "common/models/fgraph/fgraph_walk.h"

namespace tracehealth {

// The host before the calibration's threads start.
struct CalibrationHost {
  uint64_t threads = 0;       // N_total now
  uint64_t null_threads = 0;  // threads without a shadow stack now
  uint32_t batch = 32;        // FTRACE_RETSTACK_ALLOC_SIZE
};

// The first enable's walk with `k` more threads (all without a stack, at
// the tail), priced with `c` (its levels included) plus `fixed_seconds`.
struct CalibrationWalk {
  uint64_t total_threads = 0;
  uint64_t fresh_threads = 0;
  WalkCost walk;
  double seconds = 0;
};
CalibrationWalk PredictCalibrationWalk(const CalibrationHost& host, uint64_t k,
                                       const WalkConstants& c,
                                       double fixed_seconds);

// The largest K in [1, max_threads] whose predicted first enable takes at
// most `budget_seconds`; 0 when even one thread's does not fit.
uint64_t ChooseCalibrationThreads(const CalibrationHost& host,
                                  double budget_seconds, uint64_t max_threads,
                                  const WalkConstants& c, double fixed_seconds);

// One measured point: the first and second enable's seconds (the shortest
// of its repetitions: interference only adds time) with N_total threads,
// N_fresh of them without a stack.
struct CalibrationPoint {
  uint64_t total_threads = 0;
  uint64_t fresh_threads = 0;
  double first_seconds = 0;
  double second_seconds = 0;
};

struct DerivedConstants {
  double c_visit_seconds = 0;
  double fixed_seconds = 0;
  // Fitted when c_pass_fitted; else the assumed c_pass it was derived with.
  double c_pass_seconds = 0;
  bool c_pass_fitted = false;
};

// c_visit, c_pass and fixed from the points (formulas above), `assumed`
// giving c_alloc, the visit levels, and c_pass where it is not fitted.
// FailedPrecondition when there is no point, a point's walk visited no more
// tasks than one pass (N_fresh == 0), a point's first enable was not slower
// than its second by more than the allocations, or the result leaves no
// positive c_visit (the first enables were not slower than the second by more
// than the assumed pass and allocation costs); the message gives the timings.
absl::StatusOr<DerivedConstants> FitCalibration(
    const std::vector<CalibrationPoint>& points, uint32_t batch,
    const WalkConstants& assumed);

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_MODELS_FGRAPH_CALIBRATION_MATH_H_
