#include "common/models/fgraph/fgraph_walk.h"

#include <algorithm>
#include <cmath>

namespace tracehealth {

WalkCost ShadowStackWalk(uint64_t n_total, uint64_t n_null, uint32_t batch,
                         NullPlacement placement) {
  WalkCost cost;
  if (batch == 0) batch = 1;
  n_null = std::min(n_null, n_total);
  const double total = static_cast<double>(n_total);
  if (n_null == 0) {
    // start_graph_tracing() runs alloc_retstack_tasklist() at least once.
    cost.passes = 1;
    cost.visits = total;
    return cost;
  }
  const uint64_t fill_passes = (n_null + batch - 1) / batch;
  const bool empty_pass = placement == NullPlacement::kHead &&
                          n_null % batch == 0 && n_null < n_total;
  // Passes that stop early: every filling pass but the last, or all of
  // them when an empty pass follows.
  const double k =
      static_cast<double>(empty_pass ? fill_passes : fill_passes - 1);
  const double b = static_cast<double>(batch);
  // Early pass i (0-based) visits the served threads before the NULL ones
  // (none at the head), its (i+1)*B NULL threads and one more.
  const double served_before = placement == NullPlacement::kTail
                                   ? total - static_cast<double>(n_null)
                                   : 0.0;
  cost.visits = k * (served_before + 1) + b * k * (k + 1) / 2 + total;
  cost.passes = fill_passes + (empty_pass ? 1 : 0);
  return cost;
}

double WalkSeconds(const WalkCost& cost, uint64_t n_null,
                   const WalkConstants& c) {
  return c.c_visit * cost.visits + c.c_pass * static_cast<double>(cost.passes) +
         c.c_alloc * static_cast<double>(n_null);
}

double WalkSecondsAllNull(double threads, uint32_t batch,
                          const WalkConstants& c) {
  const double b = batch == 0 ? 1.0 : static_cast<double>(batch);
  return c.c_visit * (threads * threads / (2 * b) + threads / 2) +
         c.c_pass * threads / b + c.c_alloc * threads;
}

double ThreadsForWalkSeconds(double seconds, uint32_t batch,
                             const WalkConstants& c) {
  if (seconds <= 0) return 0;
  const double b = batch == 0 ? 1.0 : static_cast<double>(batch);
  const double qa = c.c_visit / (2 * b);
  const double qb = c.c_visit / 2 + c.c_pass / b + c.c_alloc;
  // qa*N^2 + qb*N - seconds = 0, positive root.
  return (-qb + std::sqrt(qb * qb + 4 * qa * seconds)) / (2 * qa);
}

std::optional<double> NullThreadsForWalkSeconds(double seconds,
                                                uint64_t n_total,
                                                uint32_t batch,
                                                const WalkConstants& c) {
  const double b = batch == 0 ? 1.0 : static_cast<double>(batch);
  const double nt = static_cast<double>(n_total);
  // qa*x^2 - qb*x + (seconds - c_visit*N_total) = 0, the smaller root.
  const double rest = seconds - c.c_visit * nt;
  if (rest <= 0) return 0.0;
  const double qa = c.c_visit / (2 * b);
  const double qb =
      c.c_visit * nt / b + c.c_visit / 2 + c.c_pass / b + c.c_alloc;
  const double disc = qb * qb - 4 * qa * rest;
  if (qa <= 0 || disc < 0) return std::nullopt;
  const double x = (qb - std::sqrt(disc)) / (2 * qa);
  if (x > nt) return std::nullopt;
  return x;
}

}  // namespace tracehealth
