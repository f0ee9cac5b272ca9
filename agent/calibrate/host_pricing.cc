#include "agent/calibrate/host_pricing.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "agent/calibrate/calibration_store.h"
#include "common/models/calibrated_constants.h"
#include "common/models/fgraph/hardware_class.h"

namespace tracehealth::agent {
namespace {

// This host's stored calibration, when there is one for the kernel release
// family the host runs now (`*warning` says why one was not used).
std::optional<v1::Calibration> UsableCalibration(const HostFs& fs,
                                                 const std::string& state_dir,
                                                 std::string* warning) {
  if (state_dir.empty()) return std::nullopt;
  absl::StatusOr<std::optional<v1::Calibration>> stored =
      LoadCalibration(state_dir);
  if (!stored.ok()) {
    *warning =
        absl::StrCat("calibration not used: ", stored.status().message());
    return std::nullopt;
  }
  if (!stored->has_value()) return std::nullopt;
  absl::StatusOr<std::string> release =
      fs.ReadFile("/proc/sys/kernel/osrelease", 4096);
  const std::string now =
      release.ok() ? KernelReleaseFamily(absl::StripAsciiWhitespace(*release))
                   : "";
  const std::string then = KernelReleaseFamily((*stored)->kernel_release());
  if (now != then) {
    *warning = absl::StrCat("calibration not used: it was measured on ",
                            (*stored)->kernel_release(), ", this host runs ",
                            release.ok() ? absl::StripAsciiWhitespace(*release)
                                         : "an unknown release");
    return std::nullopt;
  }
  return **stored;
}

}  // namespace

HostPricing LoadHostPricing(const HostFs& fs, const std::string& state_dir,
                            const FeatureTable* features,
                            std::string* warning) {
  warning->clear();
  HostPricing p;
  p.features = features;
  p.calibration = UsableCalibration(fs, state_dir, warning);
  return p;
}

ModelOptions HostModelOptions(const HostPricing& pricing) {
  ModelOptions o;
  o.features = pricing.features;
  o.c_visit_seconds = pricing.c_visit_seconds;
  if (pricing.calibration.has_value() &&
      pricing.calibration->c_visit_seconds() > 0) {
    o.calibration = ConstantsOf(*pricing.calibration);
  } else if (pricing.class_constants.has_value()) {
    o.calibration = pricing.class_constants;
    o.calibration->origin = ConstantsOrigin::kClassCalibration;
  }
  return o;
}

}  // namespace tracehealth::agent
