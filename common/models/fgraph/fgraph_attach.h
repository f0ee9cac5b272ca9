// fgraph shadow-stack attach model, the numbers (docs/design.md §3.1).
//
// When the number of fgraph users goes 0 -> 1 the kernel hands every thread
// whose ret_stack is NULL a shadow stack, B at a time
// (FTRACE_RETSTACK_ALLOC_SIZE); every pass re-walks the task list from its
// head under rcu_read_lock() with no reschedule point. The cost is
// quadratic in the thread count. Which probe kinds trigger that transition
// depends on the kernel release (feature table rows fprobe_on_fgraph and
// fprobe_entry_only_off_fgraph).
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

#include "common/kernel/feature_table.h"
#include "common/models/kernel_features.h"
#include "common/models/model_inputs.h"
#include "common/models/model_options.h"
#include "proto/tracehealth/v1/predictions.pb.h"
#include "proto/tracehealth/v1/snapshot.pb.h"

namespace tracehealth {

// Cost constants of the model, in seconds.
struct FgraphConstants {
  // Per task visited by the walk (a memory-latency-bound pointer chase).
  // Seed 000's six rows, with the exact visit count of ShadowStackWalk(),
  // give 81.2-97.8 ns per visit on a 60-core Sapphire Rapids host; 88.7 ns
  // is the minimax fit (every row within +-9.2%), slightly under the
  // rounder 90 ns that the N^2/(2B) approximation suggests.
  double c_visit = 88.7e-9;
  // Per pass: rcu_read_lock/unlock, loop set-up, freeing the unused tail.
  double c_pass = 2e-6;
  // Per shadow stack handed out: kmem_cache_alloc of a 4 KiB object on the
  // per-CPU fast path (slab refills amortised).
  double c_alloc = 20e-9;
  // Per call site patched at registration (batched text_poke on x86).
  double c_site = 1e-6;
};

// Kernel default of FTRACE_RETSTACK_ALLOC_SIZE through 7.1.
inline constexpr uint32_t kDefaultRetstackBatch = 32;
inline constexpr uint32_t kPatchedRetstackBatch = 1024;
// Call sites assumed when the host did not report them.
inline constexpr uint64_t kDefaultFilterFunctions = 50000;
inline constexpr uint64_t kDefaultKprobeMultiSites = 100;

// Probe kinds by how they reach ftrace.
bool IsGraphTracerKind(
    v1::ProbeKind kind);  // function_graph, profiler, display-graph
bool IsFprobeKind(v1::ProbeKind kind);  // kprobe_multi, session, fprobe events
bool IsEntryOnlyFprobeKind(
    v1::ProbeKind kind);  // fprobe users without an exit handler

// Why a probe kind does or does not register an fgraph user on a kernel.
enum class FgraphUseRule {
  kGraphTracer,         // always
  kKretprobe,           // rethook, never fgraph
  kTrampoline,          // fentry/fexit: BPF trampolines, never fgraph
  kNotAProbe,           // PROBE_KIND_UNSPECIFIED
  kReleaseUnknown,      // an fprobe kind on an unknown release: worst case
  kFprobeOnRethook,     // fprobe before 6.14
  kEntryOnlyOffFgraph,  // entry-only fprobe from 6.19 (6.18.35)
  kEveryFprobe,         // entry-only fprobe from 6.14 until then
  kExitHandler,         // fprobe with an exit handler from 6.14
};

struct FgraphUse {
  FgraphUseRule rule = FgraphUseRule::kNotAProbe;
  bool uses_fgraph = false;
  bool release_known = true;
  // The feature answers consulted, in order; they point into the
  // KernelFeatures passed to DecideFgraphUse.
  const FeatureAnswer* rows[2] = {nullptr, nullptr};
  int nrows = 0;
};
FgraphUse DecideFgraphUse(v1::ProbeKind kind, const KernelFeatures& features);

// The walk's arithmetic: passes and task visits for N_total threads of
// which N_null have no shadow stack, spread evenly through the task list.
// Pass i (i < P-1) stops one task after handing out its B-th stack, i.e.
// after the ((i+1)*B)-th NULL task, at position (i+1)*B*N_total/N_null; the
// last pass walks the whole list. When N_null is a multiple of B and served
// tasks follow the last NULL one (N_null < N_total), one more, empty pass
// walks the whole list. N_null == 0 still runs one full pass.
struct WalkCost {
  uint64_t passes = 0;
  double visits = 0;
};
WalkCost ShadowStackWalk(uint64_t n_total, uint64_t n_null, uint32_t batch);

// Seconds of the walk phase (visits, passes and allocations) for
// N_total = N_null = `threads`.
double WalkSecondsAllNull(double threads, uint32_t batch,
                          const FgraphConstants& c);

// Inverse of WalkSecondsAllNull: the thread count (all NULL) at which the
// walk takes `seconds` (solves the quadratic; 0 for seconds <= 0).
double ThreadsForWalkSeconds(double seconds, uint32_t batch,
                             const FgraphConstants& c);

// What the attach model derives from a snapshot independently of the probe
// kind: feature answers, constants, batch, preemption, N_total, N_null, the
// walk and the stall inverse. Built once for all ten kinds.
struct AttachContext {
  // Not owned; outlives the context.
  const KernelFeatures* features = nullptr;
  FgraphConstants c;
  bool c_visit_overridden = false;
  bool graph_config_off = false;   // CONFIG_FUNCTION_GRAPH_TRACER=n
  bool fprobe_config_off = false;  // CONFIG_FPROBE=n
  uint32_t batch = kDefaultRetstackBatch;
  v1::InputSource batch_source = v1::INPUT_SOURCE_DEFAULT;
  v1::PreemptMode preempt = v1::PREEMPT_MODE_UNKNOWN;
  bool active_known = false;
  bool active = false;
  bool threads_known = false;
  uint64_t n_total = 0;
  uint64_t n_null = 0;
  v1::InputSource null_source = v1::INPUT_SOURCE_DEFAULT;
  WalkCost walk;
  double walk_seconds = 0;
  std::optional<double> threads_at_stall;
};

// `features` must outlive the returned context.
AttachContext MakeAttachContext(const v1::HostSnapshot& snapshot,
                                const ModelOptions& options,
                                const KernelFeatures& features);

// The inputs of one attach prediction, in the order its basis lists them.
enum class AttachInput {
  kRelease,          // kernel.release
  kSites,            // sites (an override, or the fprobe default)
  kFilterFunctions,  // fgraph.available_filter_functions
  kPreemptMode,      // kernel.preempt_mode
  kWatchdogThresh,   // thresholds.watchdog_thresh
  kRcuStallTimeout,  // thresholds.rcu_cpu_stall_timeout
  kBatch,            // batch
  kFgraphActive,     // fgraph.active
  kThreadsTotal,     // threads.total
  kNullThreads,      // fgraph.null_threads_bound
};
using AttachInputs = ModelInputs<AttachInput, 12>;

// What decides one probe kind's prediction beyond the context.
struct AttachCase {
  v1::ProbeKind kind = v1::PROBE_KIND_UNSPECIFIED;
  FgraphUse use;
  // The kind exists on this kernel (its CONFIG_ option is not off).
  bool available = true;
  // A new fgraph user while fgraph is inactive: the shadow-stack walk.
  bool walks = false;
  // Call sites the registration patches.
  uint64_t sites = 1;
  AttachInputs inputs;
  // Inputs the model needed and could not get at all.
  int unknown_inputs = 0;
};
AttachCase MakeAttachCase(const v1::HostSnapshot& snapshot, v1::ProbeKind kind,
                          const ModelOptions& options,
                          const AttachContext& context);

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

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_MODELS_FGRAPH_FGRAPH_ATTACH_H_
