#include "server/calibration/calibration_intake.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/escape.h"
#include "common/host_identity.h"
#include "common/models/fgraph/hardware_class.h"

namespace tracehealth::server {
namespace {

// No walk visits a task in more than a millisecond, and no enable's fixed
// part takes a minute: larger values are a broken measurement.
constexpr double kMaxCVisitSeconds = 1e-3;
constexpr double kMaxFixedSeconds = 60;

absl::Status Invalid(absl::string_view field, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", why));
}

}  // namespace

absl::Status ValidateCalibration(const v1::Calibration& c) {
  if (!IsValidHostId(c.host_id())) {
    return Invalid("host_id", absl::StrCat("\"", EchoText(c.host_id()),
                                           "\" is no valid host id"));
  }
  const double v = c.c_visit_seconds();
  if (!std::isfinite(v) || v <= 0 || v > kMaxCVisitSeconds) {
    return Invalid("c_visit_seconds",
                   absl::StrCat(v, " is not in (0, ", kMaxCVisitSeconds, "]"));
  }
  const double f = c.fixed_seconds();
  if (!std::isfinite(f) || f < 0 || f > kMaxFixedSeconds) {
    return Invalid("fixed_seconds",
                   absl::StrCat(f, " is not in [0, ", kMaxFixedSeconds, "]"));
  }
  if (c.cpu_model().empty()) return Invalid("cpu_model", "required");
  if (KernelReleaseFamily(c.kernel_release()).empty()) {
    return Invalid("kernel_release",
                   absl::StrCat("\"", EchoText(c.kernel_release()),
                                "\" has no MAJOR.MINOR"));
  }
  if (!c.has_measured_at()) return Invalid("measured_at", "required");
  return absl::OkStatus();
}

CalibrationIntake::CalibrationIntake(CalibrationStore* store,
                                     ClassCalibrations* classes,
                                     std::function<absl::Time()> now)
    : store_(store), classes_(classes), now_(std::move(now)) {}

absl::Status CalibrationIntake::Submit(
    v1::Calibration c, const std::vector<std::string>* identities,
    v1::SubmitCalibrationResponse* response) {
  absl::Status valid = ValidateCalibration(c);
  if (!valid.ok()) return valid;
  if (identities != nullptr && std::find(identities->begin(), identities->end(),
                                         c.host_id()) == identities->end()) {
    return absl::PermissionDeniedError(absl::StrCat(
        "client certificate does not name host \"", c.host_id(), "\""));
  }
  // The class is the server's to decide, from the hardware the agent read.
  c.set_hardware_class(HardwareClass(c.cpu_model(), c.kernel_release()));
  c.set_class_canaries(0);
  absl::StatusOr<bool> stored =
      store_->PutCalibration(CalibrationRowOf(c, now_()));
  if (!stored.ok()) {
    return absl::UnavailableError(
        absl::StrCat("storing the calibration: ", stored.status().message()));
  }
  // A calibration sent again (stored already) is counted once.
  if (*stored) classes_->Add(c);
  std::optional<ClassConstants> k = classes_->Of(c.hardware_class());
  response->set_hardware_class(c.hardware_class());
  if (k) {
    response->set_class_calibrations(k->calibrations);
    response->set_class_c_visit_seconds(k->c_visit_median);
    response->set_class_fixed_seconds(k->fixed_median);
  }
  return absl::OkStatus();
}

}  // namespace tracehealth::server
