// The shadow-stack walk's arithmetic (docs/design.md §3.1): passes and task
// visits of start_graph_tracing()'s loop, its seconds, and the inverses.
//
// Each pass hands out up to B stacks (FTRACE_RETSTACK_ALLOC_SIZE) walking
// the task list from init_task; a pass that has handed out its B-th stack
// stops at the next thread (-EAGAIN) and the next pass starts again at the
// head. So the cost depends on where in the list the N_null threads without
// a stack sit: for_each_process_thread() runs in creation order (processes
// in fork order, each with its threads in fork order), so threads of
// processes forked since fgraph was last active sit at the tail (the worst
// case, walked past by every pass), the oldest at the head (the best).
//
// Thread safety: pure functions.
#ifndef TRACEHEALTH_COMMON_MODELS_FGRAPH_FGRAPH_WALK_H_
#define TRACEHEALTH_COMMON_MODELS_FGRAPH_FGRAPH_WALK_H_

#include <cstdint>
#include <optional>
#include <vector>

namespace tracehealth {

// PID_MAX_LIMIT on 64-bit kernels (include/linux/threads.h: 4 * 1024 *
// 1024): no host has more threads.
inline constexpr uint64_t kPidMaxLimit = 4194304;

// The price of a visit by the size of the pass that makes it: a pass that
// walks w tasks touches about the same cache lines of each of them, so once
// w tasks' lines no longer fit a cache level (or their pages the TLB) every
// visit of that pass costs a miss. `factor` multiplies c_visit for the
// passes of from_tasks tasks or more (up to the next level); passes shorter
// than the first level's from_tasks cost c_visit (factor 1). Measured on the
// host by a user-space walk laid out as the task list
// (agent/calibrate/memory_walk.h); empty: one price for every pass.
struct VisitLevel {
  double from_tasks = 0;
  double factor = 1;
};

// Cost constants of the walk, in seconds.
struct WalkConstants {
  double c_visit = 0;  // per task visited (at factor 1)
  double c_pass = 0;   // per pass
  double c_alloc = 0;  // per shadow stack handed out
  // Sorted by from_tasks; empty: every visit costs c_visit.
  std::vector<VisitLevel> levels;
};

// The factor of a pass that walks `tasks` tasks (1 without levels).
double VisitFactor(const std::vector<VisitLevel>& levels, double tasks);

enum class NullPlacement {
  kHead,  // the N_null threads are the first in the list: the best case
  kTail,  // they are the last (forked last): the worst case
};

struct WalkCost {
  uint64_t passes = 0;
  double visits = 0;
  // Sum over the passes of factor(pass's visits) * pass's visits: what
  // c_visit multiplies (== visits without levels).
  double weighted_visits = 0;
};

// Passes and visits for N_total threads, N_null of them (clamped to
// N_total) without a stack, placed as `placement` says. F = ceil(N_null/B)
// filling passes; each but the last stops one thread after its B-th NULL
// thread, and the last walks to the end of the list. At the head, the
// B-th NULL thread of the last filling pass is followed by served threads
// when N_null is a multiple of B and N_null < N_total, so one more, empty
// pass walks the whole list; at the tail it is the last thread and the
// pass ends there. N_null == 0 still runs one full pass.
//   head: V = B*k(k+1)/2 + k + N_total,                  k = F - 1 (+1)
//   tail: V = k*(N_total - N_null + 1) + B*k(k+1)/2 + N_total, k = F - 1
// Early pass i (1-based) visits a + i*B tasks, a = N_total - N_null + 1 at
// the tail and 1 at the head; the last visits N_total. weighted_visits sums
// each pass's visits times VisitFactor(levels, its visits), in closed form
// per level.
WalkCost ShadowStackWalk(uint64_t n_total, uint64_t n_null, uint32_t batch,
                         NullPlacement placement,
                         const std::vector<VisitLevel>& levels = {});

// c_visit * weighted V + c_pass * P + c_alloc * N_null.
double WalkSeconds(const WalkCost& cost, uint64_t n_null,
                   const WalkConstants& c);

// Seconds of the walk for N_total = N_null = `threads` (continuous form):
// c_visit * (N^2/(2B) + N/2) + c_pass * N/B + c_alloc * N. With levels:
// the walk of round(threads) threads (ShadowStackWalk, WalkSeconds).
double WalkSecondsAllNull(double threads, uint32_t batch,
                          const WalkConstants& c);

// Inverse of WalkSecondsAllNull: the thread count (all NULL) at which the
// walk takes `seconds` (the quadratic's positive root; 0 for seconds <= 0).
// With levels: the smallest whole count whose walk takes `seconds` or more,
// by bisection up to 2^32 threads.
double ThreadsForWalkSeconds(double seconds, uint32_t batch,
                             const WalkConstants& c);

// At `n_total` threads, the NULL-stack threads at the tail whose walk takes
// `seconds`, from the continuous tail form c_visit * (x*N_total/B -
// x^2/(2B) + x/2 + N_total) + c_pass * x/B + c_alloc * x. 0 when even the
// one full pass takes `seconds`; nullopt when no x <= N_total reaches it.
// With levels: a whole x whose walk takes `seconds` or more, found by
// bisection: within one batch of the smallest (inside a batch the walk
// shrinks as x grows: each early pass walks fewer served threads).
std::optional<double> NullThreadsForWalkSeconds(double seconds,
                                                uint64_t n_total,
                                                uint32_t batch,
                                                const WalkConstants& c);

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_MODELS_FGRAPH_FGRAPH_WALK_H_
