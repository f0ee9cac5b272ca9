// The fgraph walk's calibrated constants (model_options.h) from a
// v1::Calibration, and their origin between the proto enum and the
// models' (ConstantsOrigin): the one converter the agent (its own
// calibration) and the server (a report's, or its class's) share.
//
// Thread safety: pure functions.
#ifndef TRACEHEALTH_COMMON_MODELS_CALIBRATED_CONSTANTS_H_
#define TRACEHEALTH_COMMON_MODELS_CALIBRATED_CONSTANTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/models/model_options.h"
#include "proto/tracehealth/v1/calibration.pb.h"

namespace tracehealth {

v1::ConstantsOrigin OriginToProto(ConstantsOrigin origin);

// The origin `c` states; a Calibration from a sender before the field
// (UNSPECIFIED) is its class's with class_canaries > 0, else the host's.
ConstantsOrigin CalibrationOrigin(const v1::Calibration& c);

// For people only: "this host's calibration 2026-12-01T15:40:00Z".
std::string HostCalibrationSource(const v1::Calibration& c);
// For people only: "3 canaries of class X" ("1 canary of class X").
std::string ClassCalibrationSource(uint32_t canaries,
                                   const std::string& hardware_class);

// The walk's visit levels from `c`'s user-space walk (memory_walk, smallest
// first): one level per point after the first, its factor the point's
// ns_per_task over the first's, starting at the geometric mean of its
// tasks and the previous point's (where between two measured sizes the
// price changed is not known: the middle on a log scale); beyond the last
// point, the last factor. Empty (one price) without a walk, or with one
// whose sizes do not grow or whose prices are not positive.
std::vector<VisitLevel> VisitLevelsOf(const v1::Calibration& c);

// c_visit, fixed, c_pass (when fitted), visit levels (the class curve's
// `visit_levels` where the server set them, else VisitLevelsOf),
// origin (CalibrationOrigin) and the source sentence of `c`.
CalibratedConstants ConstantsOf(const v1::Calibration& c);

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_MODELS_CALIBRATED_CONSTANTS_H_
