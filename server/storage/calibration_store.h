// CalibrationStore: the server's durable store of host calibrations
// (tracehealth-agent --calibrate --server, TelemetryIngest.SubmitCalibration),
// from which the hardware classes' constants are rebuilt at start, and on a
// store several replicas share every class refresh interval
// (server/calibration/class_calibrations.h, class_refresher.h).
//
// Implemented by every storage backend beside EventStore;
// server/storage/conformance/ holds the contract tests every backend passes.
//
// Thread safety: implementations are safe to call from several threads.
#ifndef TRACEHEALTH_SERVER_STORAGE_CALIBRATION_STORE_H_
#define TRACEHEALTH_SERVER_STORAGE_CALIBRATION_STORE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tracehealth::server {

// One calibration as stored: the columns the aggregation needs plus the
// serialized tracehealth.v1.Calibration. Times are Unix nanoseconds.
struct CalibrationRow {
  std::string host_id;
  std::string hardware_class;
  int64_t measured_at_ns = 0;
  double c_visit_seconds = 0;
  double fixed_seconds = 0;
  int64_t received_at_ns = 0;
  std::string blob;
};

class CalibrationStore {
 public:
  virtual ~CalibrationStore() = default;

  // Stores `row`. A row with the (host_id, measured_at_ns) of a stored one
  // (the same calibration sent again) is left as it is: returns false.
  virtual absl::StatusOr<bool> PutCalibration(const CalibrationRow& row) = 0;

  // Every stored calibration, oldest measured first (ties by host_id).
  virtual absl::StatusOr<std::vector<CalibrationRow>> ListCalibrations() = 0;
};

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_STORAGE_CALIBRATION_STORE_H_
