#include "common/models/fgraph/fgraph_walk.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace tracehealth {
namespace {

// Sum over i = 1..k of VisitFactor(a + i*b) * (a + i*b): for each level's
// range of pass sizes [lo, hi), the passes i whose a + i*b falls in it, an
// arithmetic series.
double WeightedEarlyVisits(double k, double a, double b,
                           const std::vector<VisitLevel>& levels) {
  if (k <= 0) return 0;
  // Below the first level: factor 1.
  std::vector<VisitLevel> spans;
  spans.push_back({0, 1});
  for (const VisitLevel& l : levels) spans.push_back(l);
  double sum = 0;
  for (size_t s = 0; s < spans.size(); ++s) {
    const double lo = spans[s].from_tasks;
    const double hi = s + 1 < spans.size()
                          ? spans[s + 1].from_tasks
                          : std::numeric_limits<double>::infinity();
    // a + i*b >= lo  <=>  i >= (lo - a) / b; a + i*b < hi  <=>  i < (hi - a) /
    // b.
    const double i0 = std::max(1.0, std::ceil((lo - a) / b));
    const double i1 =
        std::isinf(hi) ? k : std::min(k, std::ceil((hi - a) / b) - 1);
    if (i1 < i0) continue;
    const double count = i1 - i0 + 1;
    sum += spans[s].factor * (count * a + b * (i0 + i1) * count / 2);
  }
  return sum;
}

// The smallest whole x in [lo, hi] with f(x) >= target (hi when none).
template <typename F>
double BisectUp(double lo, double hi, double target, F f) {
  while (hi - lo > 1) {
    const double mid = std::floor((lo + hi) / 2);
    if (f(mid) >= target) {
      hi = mid;
    } else {
      lo = mid;
    }
  }
  return f(lo) >= target ? lo : hi;
}

}  // namespace

double VisitFactor(const std::vector<VisitLevel>& levels, double tasks) {
  double factor = 1;
  for (const VisitLevel& l : levels) {
    if (l.from_tasks > tasks) break;
    factor = l.factor;
  }
  return factor;
}

WalkCost ShadowStackWalk(uint64_t n_total, uint64_t n_null, uint32_t batch,
                         NullPlacement placement,
                         const std::vector<VisitLevel>& levels) {
  WalkCost cost;
  if (batch == 0) batch = 1;
  n_null = std::min(n_null, n_total);
  const double total = static_cast<double>(n_total);
  const double last_pass = VisitFactor(levels, total) * total;
  if (n_null == 0) {
    // start_graph_tracing() runs alloc_retstack_tasklist() at least once.
    cost.passes = 1;
    cost.visits = total;
    cost.weighted_visits = last_pass;
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
  cost.weighted_visits =
      levels.empty()
          ? cost.visits
          : WeightedEarlyVisits(k, served_before + 1, b, levels) + last_pass;
  cost.passes = fill_passes + (empty_pass ? 1 : 0);
  return cost;
}

double WalkSeconds(const WalkCost& cost, uint64_t n_null,
                   const WalkConstants& c) {
  return c.c_visit * cost.weighted_visits +
         c.c_pass * static_cast<double>(cost.passes) +
         c.c_alloc * static_cast<double>(n_null);
}

double WalkSecondsAllNull(double threads, uint32_t batch,
                          const WalkConstants& c) {
  if (!c.levels.empty()) {
    const uint64_t n =
        static_cast<uint64_t>(std::llround(std::max(0.0, threads)));
    return WalkSeconds(
        ShadowStackWalk(n, n, batch, NullPlacement::kTail, c.levels), n, c);
  }
  const double b = batch == 0 ? 1.0 : static_cast<double>(batch);
  return c.c_visit * (threads * threads / (2 * b) + threads / 2) +
         c.c_pass * threads / b + c.c_alloc * threads;
}

double ThreadsForWalkSeconds(double seconds, uint32_t batch,
                             const WalkConstants& c) {
  if (seconds <= 0) return 0;
  if (!c.levels.empty()) {
    return BisectUp(0, 4294967296.0, seconds,
                    [&](double n) { return WalkSecondsAllNull(n, batch, c); });
  }
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
  if (!c.levels.empty()) {
    auto walk = [&](double x) {
      const uint64_t n_null = static_cast<uint64_t>(x);
      return WalkSeconds(ShadowStackWalk(n_total, n_null, batch,
                                         NullPlacement::kTail, c.levels),
                         n_null, c);
    };
    if (walk(0) >= seconds) return 0.0;
    if (walk(nt) < seconds) return std::nullopt;
    return BisectUp(0, nt, seconds, walk);
  }
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
