// Options of the models (what-if overrides and calibration), shared by every
// model entry point (common/models/evaluate.h).
#ifndef TRACEHEALTH_COMMON_MODELS_MODEL_OPTIONS_H_
#define TRACEHEALTH_COMMON_MODELS_MODEL_OPTIONS_H_

#include <cstdint>
#include <optional>

#include "common/kernel/feature_table.h"

namespace tracehealth {

// Snapshot inputs a what-if replaced (server/query/what_if.h). The models
// list them in the basis as INPUT_SOURCE_OVERRIDDEN, not as measured.
struct OverriddenInputs {
  bool threads = false;         // threads.total
  bool null_threads = false;    // fgraph.null_threads_bound
  bool preempt_mode = false;    // kernel.preempt_mode
  bool kernel_release = false;  // kernel.release
  bool fgraph_active = false;   // fgraph.active
};

struct ModelOptions {
  // Feature table deciding version-dependent behaviour. Not owned; must
  // outlive the call.
  const FeatureTable* features = &FeatureTable::Builtin();
  // Per-task visit cost of the shadow-stack walk (seed 000 fit: 81-98 ns).
  std::optional<double> c_visit_seconds;
  // Override of FTRACE_RETSTACK_ALLOC_SIZE (what-if; default from the table).
  std::optional<uint32_t> batch;
  // Latency budget for the inverse prediction threads_at_latency_budget.
  std::optional<double> latency_budget_seconds;
  // Call sites the new probe would patch (what-if; default per probe kind:
  // available_filter_functions for the function-graph tracers, a typical
  // count for kprobe_multi/fprobe, one for kretprobe and fentry/fexit).
  std::optional<uint64_t> sites;
  // Which snapshot inputs are what-if values rather than the host's.
  OverriddenInputs overridden;
};

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_MODELS_MODEL_OPTIONS_H_
