// This host's calibration in the state directory: the last successful
// tracehealth-agent --calibrate, as JSON of proto Calibration
// (STATE_DIR/calibration.json, written atomically). What the models take
// from it: host_pricing.h.
//
// Thread safety: functions of the file.
#ifndef TRACEHEALTH_AGENT_CALIBRATE_CALIBRATION_STORE_H_
#define TRACEHEALTH_AGENT_CALIBRATE_CALIBRATION_STORE_H_

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/tracehealth/v1/calibration.pb.h"

namespace tracehealth::agent {

inline constexpr char kCalibrationFile[] = "calibration.json";

// One-line JSON (field names as in the .proto).
std::string CalibrationJson(const v1::Calibration& calibration);

absl::Status SaveCalibration(absl::string_view state_dir,
                             const v1::Calibration& calibration);
// nullopt when there is none; InvalidArgument when it does not parse or
// has no positive c_visit.
absl::StatusOr<std::optional<v1::Calibration>> LoadCalibration(
    absl::string_view state_dir);

}  // namespace tracehealth::agent

#endif  // TRACEHEALTH_AGENT_CALIBRATE_CALIBRATION_STORE_H_
