// How the agent prices this host: the one place that turns this host's
// calibration, a class's constants and the caller's overrides into the
// models' options. The agent's reports (agent_runner.cc), its gate
// (agent/gate/gate_service.h), the calibrator's own prediction
// (calibrate_command.cc) and `tracehealthctl gate` in-process all take
// their ModelOptions from HostModelOptions, so one host gets one answer
// whichever of them is asked.
//
// The walk constants, first that applies:
//   1. a what-if c_visit_seconds (origin kWhatIf);
//   2. this host's own calibration, when it was measured on the kernel
//      release family the host runs (kHostCalibration);
//   3. its hardware class's constants, when the caller has them
//      (kClassCalibration; the agent itself never does: the server prices
//      such hosts, server/calibration/calibrated_report.h);
//   4. the seed default (kSeedDefault).
//
// Thread safety: plain functions; a HostPricing is a value.
#ifndef TRACEHEALTH_AGENT_CALIBRATE_HOST_PRICING_H_
#define TRACEHEALTH_AGENT_CALIBRATE_HOST_PRICING_H_

#include <optional>
#include <string>

#include "common/kernel/feature_table.h"
#include "common/models/model_options.h"
#include "common/procfs/host_fs.h"
#include "proto/tracehealth/v1/calibration.pb.h"

namespace tracehealth::agent {

// Where the agent keeps its state, calibration.json included, unless told
// otherwise (--state_dir); a host path.
inline constexpr char kDefaultStateDir[] = "/var/lib/tracehealth-agent";

struct HostPricing {
  // The feature table (the operator's override, or the built-in one). Not
  // owned.
  const FeatureTable* features = &FeatureTable::Builtin();
  // This host's calibration, usable on the release family it runs.
  std::optional<v1::Calibration> calibration;
  // Its class's constants (origin kClassCalibration), used without a
  // calibration of its own.
  std::optional<CalibratedConstants> class_constants;
  // What-if: the per-visit cost, over every calibration.
  std::optional<double> c_visit_seconds;
};

// This host's pricing with `features`: its calibration read from
// `state_dir` (calibration_store.h; "" reads none), kept only when it was
// measured on the kernel release family `fs` runs now. `*warning` says why
// a stored calibration is not used ("" when there is none or it is).
HostPricing LoadHostPricing(const HostFs& fs, const std::string& state_dir,
                            const FeatureTable* features, std::string* warning);

// The models' options for this host (order above).
ModelOptions HostModelOptions(const HostPricing& pricing);

}  // namespace tracehealth::agent

#endif  // TRACEHEALTH_AGENT_CALIBRATE_HOST_PRICING_H_
