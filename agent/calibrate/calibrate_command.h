// tracehealth-agent --calibrate: one calibration (calibrator.h), its line on
// stdout, the result kept in the state directory and, with --server, sent
// to the server (TelemetryIngest.SubmitCalibration). Also what every agent
// start does with calibration state: undo an interrupted calibration
// (journal.h) and load the stored one for the model.
//
// Output, one line on `out`:
//   calibrated: c_visit=88.7 ns fixed=41.2 us c_pass=2.6 us (fitted)
//     threads=20000 first_enable=812.345 ms second_enable=3.210 ms
//     points_ms=6667:95.102/3.001,13334:370.442/3.150,20000:812.345/3.210
//     repetitions=2                                        (one line)
//   (points_ms: each point's threads, shortest first / second enable)
//   with format "json": the Calibration message as JSON (json_util,
//   .proto field names);
//   refused: <reason>                                      (exit code 1)
//   error: <reason>                                        (exit code 2)
//
// Thread safety: call once per process.
#ifndef TRACEHEALTH_AGENT_CALIBRATE_CALIBRATE_COMMAND_H_
#define TRACEHEALTH_AGENT_CALIBRATE_CALIBRATE_COMMAND_H_

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "common/client_credentials.h"
#include "common/kernel/feature_table.h"
#include "common/models/model_options.h"
#include "common/procfs/host_fs.h"
#include "proto/tracehealth/v1/calibration.pb.h"

namespace tracehealth::agent {

struct CalibrateCommand {
  std::string state_dir;  // required
  std::string host_id;
  // "" : not sent; otherwise host:port, or several comma-separated (each
  // tried in turn until one takes it).
  std::string server;
  ClientTls tls;
  std::string format = "text";
  absl::Duration budget = absl::Seconds(1);
  uint64_t threads = 0;
  uint32_t points = 3;
  uint32_t repeats = 2;
  absl::Duration hold_for_test = absl::ZeroDuration();
  const FeatureTable* features = &FeatureTable::Builtin();
};

// Exit code: 0 calibrated (stored, and sent when --server is given), 1
// refused, 2 error (including a failure to store or send the result; the
// line on `out` then still shows what was measured). `stop` is notified by
// SIGINT/SIGTERM; the calibration then restores tracefs and fails.
int RunCalibrate(const HostFs& fs, const CalibrateCommand& command,
                 absl::Notification* stop, std::ostream& out,
                 std::ostream& err);

// The one-line text form (above) of a calibration.
std::string CalibrationLine(const v1::Calibration& calibration);

}  // namespace tracehealth::agent

#endif  // TRACEHEALTH_AGENT_CALIBRATE_CALIBRATE_COMMAND_H_
