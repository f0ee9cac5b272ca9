// fgraph shadow-stack attach model, the numbers (docs/design.md §3.1).
//
// When the number of fgraph users goes 0 -> 1 the kernel hands every thread
// whose ret_stack is NULL a shadow stack, B at a time
// (FTRACE_RETSTACK_ALLOC_SIZE); every pass re-walks the task list from its
// head (fgraph_walk.h). Which probe kinds trigger that transition, which
// stretches of the walk count against the watchdogs and what a second
// fgraph user costs depend on the kernel (fgraph_kernel.h); the constants
// are in fgraph_constants.h.
//
// This file computes what a report carries: the prediction's numbers, risk,
// checks and confidence. Its summary and basis are written by
// fgraph_explain.h from the same snapshot, options and prediction.
//
// Thread safety: pure functions.
#ifndef TRACEHEALTH_COMMON_MODELS_FGRAPH_FGRAPH_ATTACH_H_
#define TRACEHEALTH_COMMON_MODELS_FGRAPH_FGRAPH_ATTACH_H_

#include <cstdint>
#include <optional>
#include <string>

#include "common/kernel/feature_table.h"
#include "common/models/fgraph/fgraph_constants.h"
#include "common/models/fgraph/fgraph_kernel.h"
#include "common/models/fgraph/fgraph_walk.h"
#include "common/models/kernel_features.h"
#include "common/models/model_inputs.h"
#include "common/models/model_options.h"
#include "proto/tracehealth/v1/predictions.pb.h"
#include "proto/tracehealth/v1/snapshot.pb.h"

namespace tracehealth {

// What the attach model derives from a snapshot independently of the probe
// kind: feature answers, preemption, constants, batch, N_total, N_null, the
// walk, its stretches and the inverses. Built once for all ten kinds.
struct AttachContext {
  // Not owned; outlives the context.
  const KernelFeatures* features = nullptr;
  Preemption preemption;
  WalkConstants c;
  bool c_visit_overridden = false;
  // c_visit (and the fixed cost) from a calibration; not with an override.
  bool c_visit_calibrated = false;
  // Priced with the seed's c_visit: its levels from the L3's size
  // (SeedVisitLevels), when the size was read.
  bool l3_known = false;
  double fixed_seconds = 0;
  std::string calibration_source;  // CalibratedConstants::source
  uint32_t batch = kDefaultRetstackBatch;
  v1::InputSource batch_source = v1::INPUT_SOURCE_DEFAULT;
  bool active_known = false;
  bool active = false;
  // threads.total read and at most PID_MAX_LIMIT.
  bool threads_known = false;
  // threads.total read but above PID_MAX_LIMIT: invalid, not used.
  bool threads_invalid = false;
  uint64_t n_total = 0;
  uint64_t n_null = 0;
  v1::InputSource null_source = v1::INPUT_SOURCE_DEFAULT;
  // The walk with the NULL threads at the tail (the prediction) and at the
  // head (the low end of its range), and one full pass.
  WalkCost walk;
  WalkCost walk_low;
  double walk_seconds = 0;
  double walk_seconds_low = 0;
  double pass_seconds = 0;
  // 5.10+ (fgraph_walk_rcu): each pass under rcu_read_lock(); before,
  // read_lock(&tasklist_lock). 6.11+ (fgraph_multi_user): more than one
  // user. An unknown release is taken as recent.
  bool walk_under_rcu = true;
  bool multi_user = true;
  Stretches stretches;
  uint32_t shadow_stack_size = 4096;
  bool page_size_used = false;  // the size is the page size (6.11-6.12)
  v1::CpuClass cpu_class = v1::CPU_CLASS_UNKNOWN;
  // The kernel enforces Indirect Branch Tracking: fprobe kinds' per-site
  // costs.
  KernelIbt ibt;
  // Inverses for the first user's walk: all-NULL threads, and NULL threads
  // at this N_total, at which it crosses the lowest applicable threshold.
  std::optional<double> threads_at_stall;
  std::optional<double> null_threads_at_stall;
};

// `features` must outlive the returned context.
AttachContext MakeAttachContext(const v1::HostSnapshot& snapshot,
                                const ModelOptions& options,
                                const KernelFeatures& features);

// The inputs of one attach prediction, in the order its basis lists them.
enum class AttachInput {
  kRelease,          // kernel.release
  kArch,             // kernel.arch
  kSites,            // sites (an override, or the fprobe default)
  kFtraceFilter,     // fgraph.ftrace_filter_functions
  kFilterFunctions,  // fgraph.available_filter_functions
  kPreemptMode,      // kernel.preempt_mode
  kPreemptDynamic,   // kernel.preempt_dynamic
  kPreemptRcu,       // kernel.config_preempt_rcu
  kWatchdogThresh,   // thresholds.watchdog_thresh
  kRcuStallTimeout,  // thresholds.rcu_cpu_stall_timeout
  kBatch,            // batch
  kFgraphActive,     // fgraph.active
  kThreadsTotal,     // threads.total
  kNullThreads,      // fgraph.null_threads_bound
  kPageSize,         // kernel.page_size
  kCpuModel,         // cpus.model_name
  kIbt,              // kernel.ibt (fgraph_kernel.h KernelIbtOf)
  kL3Cache,          // cpus.l3_cache_bytes (the seed's levels)
};
using AttachInputs = ModelInputs<AttachInput, 18>;

// What decides one probe kind's prediction beyond the context.
struct AttachCase {
  v1::ProbeKind kind = v1::PROBE_KIND_UNSPECIFIED;
  FgraphUse use;
  KindSupport support;
  // The kind exists on this kernel.
  bool available = true;
  // A new fgraph user while fgraph is inactive: the shadow-stack walk.
  bool walks = false;
  // A new fgraph user while fgraph is active: from 6.11 one more pass
  // (init_task_vars); before, the kernel refuses it (-EBUSY).
  bool second_user = false;
  bool busy = false;
  // Call sites the registration patches, and their costs.
  uint64_t sites = 1;
  SiteCosts costs;
  AttachInputs inputs;
  // Inputs the model needed and could not get at all.
  int unknown_inputs = 0;
  // Feature rows consulted whose release is uncertain for this kernel
  // (each counts as an input taken by default).
  int uncertain_rows = 0;
};
AttachCase MakeAttachCase(const v1::HostSnapshot& snapshot, v1::ProbeKind kind,
                          const ModelOptions& options,
                          const AttachContext& context);

// Whether the patching of `kind`'s sites has reschedule points on the
// context's host (fgraph_kernel.h: not when the sites are patched in one
// ftrace update on an architecture whose ftrace_replace_code() does not
// reschedule, x86 or unknown); the one answer the prediction's stretches
// and the explanation use.
bool PatchingReschedulesFor(const AttachContext& ctx, v1::ProbeKind kind);

// The attach prediction's numbers for one probe kind (see evaluate.h):
// everything but the summary and the basis's lists.
v1::AttachPrediction PredictFgraphAttach(const v1::HostSnapshot& snapshot,
                                         v1::ProbeKind kind,
                                         const ModelOptions& options);
// The same into `*out`, which is reset first; the memory of its basis is
// kept, so refilling one message allocates little. `context` comes from
// MakeAttachContext(snapshot, options, ...).
void PredictFgraphAttach(const v1::HostSnapshot& snapshot, v1::ProbeKind kind,
                         const ModelOptions& options,
                         const AttachContext& context,
                         v1::AttachPrediction* out);

// The same from the kind's case, MakeAttachCase(snapshot, kind, options,
// context), when the caller has it.
void PredictFgraphAttach(const v1::HostSnapshot& snapshot,
                         const ModelOptions& options,
                         const AttachContext& context,
                         const AttachCase& kind_case,
                         v1::AttachPrediction* out);

// How many times c_visit would have to be for one of `s`'s stretches to
// reach its stall threshold, the lowest such factor and its check; nullopt
// when no stretch grows with c_visit (or no threshold applies).
struct CVisitFactor {
  double factor = 0;
  v1::ThresholdCheck::Kind check = v1::ThresholdCheck::KIND_UNSPECIFIED;
};
std::optional<CVisitFactor> CVisitFactorToStall(
    const AttachContext& context, const Stretches& s,
    const v1::Thresholds& thresholds);

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_MODELS_FGRAPH_FGRAPH_ATTACH_H_
