// Which calibrated constants a host's predictions use on the server, and
// the report as the server shows it (queries, explanations, metrics, event
// comparisons):
//   - the host's own calibration (HostReport.calibration, sent by its
//     agent, whose predictions already use it): the report as it is;
//   - else its hardware class's constants (class_calibrations.h: the
//     curve through its canaries' prices, the medians of fixed and c_pass),
//     when the class has calibrations: a copy whose `calibration` stands
//     for the class (class_canaries > 0, visit_levels the curve's) and whose
//     predictions are recomputed with the class's constants;
//   - else the seed default: the report as it is.
//
// Thread safety: pure functions (ClassCalibrations is thread-safe).
#ifndef TRACEHEALTH_SERVER_CALIBRATION_CALIBRATED_REPORT_H_
#define TRACEHEALTH_SERVER_CALIBRATION_CALIBRATED_REPORT_H_

#include <memory>
#include <optional>
#include <string>

#include "common/kernel/feature_table.h"
#include "common/models/model_options.h"
#include "proto/tracehealth/v1/calibration.pb.h"
#include "proto/tracehealth/v1/report.pb.h"
#include "server/calibration/class_calibrations.h"

namespace tracehealth::server {

// The hardware class of the host that sent `r` ("" when its CPU model or
// kernel release is not known).
std::string ReportHardwareClass(const v1::HostReport& r);

// The constants `r`'s predictions are computed with (nullopt: the seed
// default): common/models/calibrated_constants.h ConstantsOf its
// calibration (origin kHostCalibration or kClassCalibration).
std::optional<CalibratedConstants> ReportCalibration(const v1::HostReport& r);

// The models' options for the host that sent `r`: its constants
// (ReportCalibration) and the feature table its agent used (the report's
// override rows, kept in `*table`; ingest refused rows that do not parse).
ModelOptions HostModelOptions(const v1::HostReport& r,
                              std::optional<FeatureTable>* table);

// `r`, or (see above) a copy with the class's calibration and predictions.
// `classes` may be null (no classes).
std::shared_ptr<const v1::HostReport> WithClassCalibration(
    std::shared_ptr<const v1::HostReport> r, const ClassCalibrations* classes);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_CALIBRATION_CALIBRATED_REPORT_H_
