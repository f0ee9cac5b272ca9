// Takes one host calibration (TelemetryIngest.SubmitCalibration): checks
// it, stores it (CalibrationStore) and counts it in its hardware class
// (ClassCalibrations), whose constants it answers with.
//
// Checks, each refusal INVALID_ARGUMENT naming the field: host_id a valid
// host id; c_visit_seconds finite and in (0, 1 ms]; fixed_seconds finite
// and in [0, 60 s]; cpu_model and kernel_release set (the class is derived
// from them; a hardware_class sent that differs is replaced); measured_at
// set. With client identities required, the host must be one the
// certificate names (PERMISSION_DENIED).
//
// Thread safety: thread-safe (the store and the classes are).
#ifndef TRACEHEALTH_SERVER_CALIBRATION_CALIBRATION_INTAKE_H_
#define TRACEHEALTH_SERVER_CALIBRATION_CALIBRATION_INTAKE_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "proto/tracehealth/v1/calibration.pb.h"
#include "server/calibration/class_calibrations.h"
#include "server/storage/calibration_store.h"

namespace tracehealth::server {

class CalibrationIntake {
 public:
  // Not owned; both must outlive the intake.
  CalibrationIntake(CalibrationStore* store, ClassCalibrations* classes,
                    std::function<absl::Time()> now);

  // `identities`: the client certificate's names when identities are
  // required, nullptr otherwise.
  absl::Status Submit(v1::Calibration calibration,
                      const std::vector<std::string>* identities,
                      v1::SubmitCalibrationResponse* response);

 private:
  CalibrationStore* const store_;
  ClassCalibrations* const classes_;
  const std::function<absl::Time()> now_;
};

// The checks above on `c` (the class not yet derived).
absl::Status ValidateCalibration(const v1::Calibration& c);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_CALIBRATION_CALIBRATION_INTAKE_H_
