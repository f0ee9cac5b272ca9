// What an operator can do when an attach is not safe on a host, each with
// its cost on that host (docs/design.md §9.1). Every mitigation is the
// attach model run again on a changed snapshot or options, so its numbers
// are the model's:
//
//   TIMING              threads shrinking: wait until the attach fits
//                       (the thread-count what-if at the trend); growing:
//                       attach now, later costs more; no trend: unknown
//   WARM_SHADOW_STACKS  the same walk once in a quiet moment; an attach
//                       within kWarmAttachWithinSeconds after it walks only
//                       the threads forked since (fork rate = forks since
//                       boot / uptime)
//   KEEP_GRAPH_USER     one graph user standing: no shadow-stack walk at
//                       attach, only one pass over the threads
//                       (init_task_vars); every thread holds a shadow stack
//                       (shadow_stack_memory.h); not offered for the graph
//                       tracers before 6.11 (one graph user at a time)
//   OTHER_PROBE_KIND    fentry/fexit, kretprobe, entry-only kprobe_multi or
//                       fprobe events where they do not use fgraph on this
//                       kernel (the feature table, through the model), with
//                       the same call sites and each kind's own per-site
//                       attach and detach costs (fentry: a trampoline
//                       update per probe, 6.07 ms); also for a new user on
//                       an active fgraph (its one pass)
//   LARGER_BATCH        the what-if with FTRACE_RETSTACK_ALLOC_SIZE 1024
//   PREEMPTIBLE         the what-if with PREEMPT_FULL, for a stall risk on a
//                       non-preemptible kernel
//
// Only mitigations that change something are listed (the walk-based ones
// only when the attach walks the shadow stacks); those that make the attach fit
// the budget come first, otherwise in the order above.
//
// Pure functions of a snapshot, options and predictions, for the host gate
// (agent/gate) and, with stored snapshots, for fleet rollout plans.
//
// Thread safety: pure functions.
#ifndef TRACEHEALTH_COMMON_MODELS_MITIGATION_MITIGATIONS_H_
#define TRACEHEALTH_COMMON_MODELS_MITIGATION_MITIGATIONS_H_

#include <optional>
#include <vector>

#include "common/models/mitigation/attach_verdict.h"
#include "common/models/model_options.h"
#include "proto/tracehealth/v1/mitigation.pb.h"
#include "proto/tracehealth/v1/snapshot.pb.h"

namespace tracehealth {

// An attach this long after warming the shadow stacks.
inline constexpr double kWarmAttachWithinSeconds = 60;
// Threads moving slower than this (per second) are steady.
inline constexpr double kSteadyThreadsPerSecond = 1.0 / 60;
// How far ahead "attach now rather than later" looks, and the longest wait
// suggested.
inline constexpr double kGrowthHorizonSeconds = 600;
inline constexpr double kMaxWaitSeconds = 86400;

// The mitigations for attaching `kind` on `snapshot` within `budget_seconds`
// when `assessment` (AssessAttach of the same arguments) is not safe; empty
// when it is. `trend` is the host's thread trend (nullopt: unknown).
std::vector<v1::Mitigation> Mitigate(
    const v1::HostSnapshot& snapshot, v1::ProbeKind kind, double budget_seconds,
    const ModelOptions& options, const AttachAssessment& assessment,
    const std::optional<v1::ThreadTrend>& trend);

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_MODELS_MITIGATION_MITIGATIONS_H_
