#include "common/models/calibrated_constants.h"

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/proto_time.h"

namespace tracehealth {

v1::ConstantsOrigin OriginToProto(ConstantsOrigin origin) {
  switch (origin) {
    case ConstantsOrigin::kSeedDefault:
      return v1::CONSTANTS_ORIGIN_SEED_DEFAULT;
    case ConstantsOrigin::kHostCalibration:
      return v1::CONSTANTS_ORIGIN_HOST_CALIBRATION;
    case ConstantsOrigin::kClassCalibration:
      return v1::CONSTANTS_ORIGIN_CLASS_CALIBRATION;
    case ConstantsOrigin::kWhatIf:
      return v1::CONSTANTS_ORIGIN_WHAT_IF;
  }
  return v1::CONSTANTS_ORIGIN_UNSPECIFIED;
}

ConstantsOrigin CalibrationOrigin(const v1::Calibration& c) {
  switch (c.origin()) {
    case v1::CONSTANTS_ORIGIN_CLASS_CALIBRATION:
      return ConstantsOrigin::kClassCalibration;
    case v1::CONSTANTS_ORIGIN_UNSPECIFIED:
      return c.class_canaries() > 0 ? ConstantsOrigin::kClassCalibration
                                    : ConstantsOrigin::kHostCalibration;
    default:
      // A calibration is measured: neither seed nor what-if.
      return ConstantsOrigin::kHostCalibration;
  }
}

std::string HostCalibrationSource(const v1::Calibration& c) {
  return absl::StrCat(
      "this host's calibration ",
      absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", FromProto(c.measured_at()),
                       absl::UTCTimeZone()));
}

std::string ClassCalibrationSource(uint32_t canaries,
                                   const std::string& hardware_class) {
  return absl::StrCat(canaries, canaries == 1 ? " canary" : " canaries",
                      " of class ", hardware_class);
}

CalibratedConstants ConstantsOf(const v1::Calibration& c) {
  CalibratedConstants k;
  k.c_visit_seconds = c.c_visit_seconds();
  k.fixed_seconds = c.fixed_seconds();
  if (c.c_pass_fitted() && c.c_pass_seconds() > 0) {
    k.c_pass_seconds = c.c_pass_seconds();
  }
  k.origin = CalibrationOrigin(c);
  k.source =
      k.origin == ConstantsOrigin::kClassCalibration
          ? ClassCalibrationSource(c.class_canaries(), c.hardware_class())
          : HostCalibrationSource(c);
  return k;
}

}  // namespace tracehealth
