// Options of the models (what-if overrides and calibration), shared by every
// model entry point (common/models/evaluate.h).
#ifndef TRACEHEALTH_COMMON_MODELS_MODEL_OPTIONS_H_
#define TRACEHEALTH_COMMON_MODELS_MODEL_OPTIONS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/kernel/feature_table.h"
#include "common/models/fgraph/fgraph_walk.h"

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

// Where the fgraph walk's constants of a prediction come from (proto
// v1::ConstantsOrigin carries it on the wire): a typed field, so that no
// reader tells them apart by the sentence the basis shows.
enum class ConstantsOrigin {
  kSeedDefault,       // the models' fitted constants (no calibration)
  kHostCalibration,   // this host's own calibration
  kClassCalibration,  // the medians of its hardware class's canaries
  kWhatIf,            // a what-if c_visit_seconds
};

// The fgraph walk's constants measured by calibration (tracehealth-agent
// --calibrate): this host's own, or the median of its hardware class's.
// They replace the seed default c_visit; a what-if c_visit_seconds still
// wins over them.
struct CalibratedConstants {
  double c_visit_seconds = 0;
  // Added to every first-user enable (registration and patching that do not
  // grow with the thread count).
  double fixed_seconds = 0;
  // Where they came from, for people (the basis shows it; never parsed):
  // "this host's calibration 2026-12-01T15:40:00Z", "3 canaries of class
  // Intel Xeon 8480+ / 6.1".
  std::string source;
  // Whose they are: kHostCalibration or kClassCalibration.
  ConstantsOrigin origin = ConstantsOrigin::kHostCalibration;
  // Seconds per pass of the walk where the calibration fitted it (proto
  // Calibration.c_pass_fitted); 0: the model's assumed per-pass cost.
  double c_pass_seconds = 0;
  // The price of a visit by the size of the pass, relative to
  // c_visit_seconds (fgraph_walk.h VisitLevel): the host's own user-space
  // walk's, or its class's curve through the canaries' prices
  // (server/calibration/class_curve.h); empty: one price.
  std::vector<VisitLevel> visit_levels;
};

struct ModelOptions {
  // Feature table deciding version-dependent behaviour. Not owned; must
  // outlive the call.
  const FeatureTable* features = &FeatureTable::Builtin();
  // Per-task visit cost of the shadow-stack walk (seed 000 fit: 81-98 ns).
  std::optional<double> c_visit_seconds;
  // Calibrated walk constants (used unless c_visit_seconds is set).
  std::optional<CalibratedConstants> calibration;
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

// The origin of the walk constants `options` price with: a what-if
// c_visit_seconds, else the calibration's, else the seed default.
inline ConstantsOrigin OriginOf(const ModelOptions& options) {
  if (options.c_visit_seconds) return ConstantsOrigin::kWhatIf;
  if (options.calibration && options.calibration->c_visit_seconds > 0) {
    return options.calibration->origin;
  }
  return ConstantsOrigin::kSeedDefault;
}

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_MODELS_MODEL_OPTIONS_H_
