#include "common/models/calibrated_constants.h"

#include <cmath>

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

std::vector<VisitLevel> VisitLevelsOf(const v1::Calibration& c) {
  std::vector<VisitLevel> levels;
  const auto& w = c.memory_walk();
  if (w.empty() || !(w[0].ns_per_task() > 0)) return levels;
  for (int i = 1; i < w.size(); ++i) {
    const double from = std::sqrt(static_cast<double>(w[i - 1].tasks()) *
                                  static_cast<double>(w[i].tasks()));
    if (!(w[i].ns_per_task() > 0) || w[i].tasks() <= w[i - 1].tasks()) {
      return {};  // not a walk the agent measured: one price
    }
    levels.push_back({from, w[i].ns_per_task() / w[0].ns_per_task()});
  }
  return levels;
}

CalibratedConstants ConstantsOf(const v1::Calibration& c) {
  CalibratedConstants k;
  k.c_visit_seconds = c.c_visit_seconds();
  k.fixed_seconds = c.fixed_seconds();
  if (c.c_pass_fitted() && c.c_pass_seconds() > 0) {
    k.c_pass_seconds = c.c_pass_seconds();
  }
  if (!c.visit_levels().empty()) {
    for (const v1::VisitLevel& l : c.visit_levels())
      k.visit_levels.push_back({l.from_tasks(), l.factor()});
  } else {
    k.visit_levels = VisitLevelsOf(c);
  }
  k.origin = CalibrationOrigin(c);
  k.source =
      k.origin == ConstantsOrigin::kClassCalibration
          ? ClassCalibrationSource(c.class_canaries(), c.hardware_class())
          : HostCalibrationSource(c);
  return k;
}

}  // namespace tracehealth
