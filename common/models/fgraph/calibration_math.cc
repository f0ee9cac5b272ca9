#include "common/models/fgraph/calibration_math.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace tracehealth {

CalibrationWalk PredictCalibrationWalk(const CalibrationHost& host, uint64_t k,
                                       const WalkConstants& c,
                                       double fixed_seconds) {
  CalibrationWalk w;
  w.total_threads = host.threads + k;
  w.fresh_threads =
      std::min(w.total_threads, std::min(host.null_threads, host.threads) + k);
  // The new threads are the newest: at the tail, the model's worst case.
  w.walk = ShadowStackWalk(w.total_threads, w.fresh_threads, host.batch,
                           NullPlacement::kTail);
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

absl::StatusOr<DerivedConstants> DeriveCalibration(
    double first_seconds, double second_seconds, uint64_t total_threads,
    uint64_t fresh_threads, uint32_t batch, const WalkConstants& c) {
  const WalkCost walk = ShadowStackWalk(total_threads, fresh_threads, batch,
                                        NullPlacement::kTail);
  const double n_total = static_cast<double>(total_threads);
  const double extra_visits = walk.visits - n_total;
  if (extra_visits <= 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the first enable walks no more than one pass (", fresh_threads,
        " threads without a shadow stack of ", total_threads, ")"));
  }
  const double extra_passes = static_cast<double>(walk.passes) - 1;
  const double walk_part = first_seconds - second_seconds -
                           c.c_pass * extra_passes -
                           c.c_alloc * static_cast<double>(fresh_threads);
  if (!(walk_part > 0)) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "the first enable (%.3f ms) was not slower than the second (%.3f ms) "
        "by more than the assumed pass and allocation costs: no walk measured",
        first_seconds * 1e3, second_seconds * 1e3));
  }
  DerivedConstants d;
  d.c_visit_seconds = walk_part / extra_visits;
  d.fixed_seconds =
      std::max(0.0, second_seconds - d.c_visit_seconds * n_total - c.c_pass);
  return d;
}

}  // namespace tracehealth
