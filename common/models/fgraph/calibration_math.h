// The arithmetic of a calibration (tracehealth-agent --calibrate): which
// thread count keeps its walk under a budget, and the per-visit and fixed
// costs two timed enables of function_graph give (docs/design.md §13.1).
//
// The first enable hands a stack to each of the N_fresh threads without one
// (the K the calibration started after its warm-up enable, forked last, so
// at the tail of the task list); the second, with every stack in place,
// walks the list once:
//   first  = fixed + c_visit * V1 + c_pass * P1 + c_alloc * N_fresh
//   second = fixed + c_visit * N_total + c_pass
// with V1, P1 = ShadowStackWalk(N_total, N_fresh, B, tail). c_pass and
// c_alloc keep their assumed values, so
//   c_visit = (first - second - c_pass * (P1 - 1) - c_alloc * N_fresh)
//             / (V1 - N_total)
//   fixed   = second - c_visit * N_total - c_pass   (at least 0)
//
// Thread safety: pure functions.
#ifndef TRACEHEALTH_COMMON_MODELS_FGRAPH_CALIBRATION_MATH_H_
#define TRACEHEALTH_COMMON_MODELS_FGRAPH_CALIBRATION_MATH_H_

#include <cstdint>

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
// the tail), priced with `c` plus `fixed_seconds`.
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

struct DerivedConstants {
  double c_visit_seconds = 0;
  double fixed_seconds = 0;
};

// c_visit and fixed from the two enables' seconds (formulas above).
// FailedPrecondition when the walk visited no more tasks than one pass
// (N_fresh == 0) or the measured difference leaves no positive c_visit
// (the first enable was not slower than the second by more than the
// assumed pass and allocation costs); the message gives both timings.
absl::StatusOr<DerivedConstants> DeriveCalibration(
    double first_seconds, double second_seconds, uint64_t total_threads,
    uint64_t fresh_threads, uint32_t batch, const WalkConstants& c);

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_MODELS_FGRAPH_CALIBRATION_MATH_H_
