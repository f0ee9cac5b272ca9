// The hardware classes' calibrated constants (docs/design.md §13.2): per
// class (CPU model + kernel release family, common/models/fgraph/
// hardware_class.h) the newest calibration of each canary host; their
// medians, and the price of a visit by the size of the walk fitted through
// their points (class_curve.h), which the server uses for every host of the
// class that has no calibration of its own (calibrated_report.h).
//
// Thread safety: all methods are thread-safe (one mutex).
#ifndef TRACEHEALTH_SERVER_CALIBRATION_CLASS_CALIBRATIONS_H_
#define TRACEHEALTH_SERVER_CALIBRATION_CLASS_CALIBRATIONS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/models/model_options.h"
#include "proto/tracehealth/v1/calibration.pb.h"
#include "server/calibration/class_curve.h"
#include "server/storage/calibration_store.h"

namespace tracehealth::server {

struct ClassConstants {
  std::string hardware_class;
  // Canary hosts (each counted once, with its newest calibration) and
  // every calibration received for the class.
  uint32_t canaries = 0;
  uint32_t calibrations = 0;
  double c_visit_median = 0;
  double c_visit_min = 0;
  double c_visit_max = 0;
  double fixed_median = 0;
  // Over the canaries whose calibration fitted its per-pass cost; 0 (the
  // model's assumed one) when none did.
  double c_pass_median = 0;
  // The curve through the canaries' points (FitClassCurve over
  // CanaryWalkOf each newest calibration that says its walk); no points
  // when none does.
  ClassCurve curve;
  // What the class's hosts are priced with: the curve's price at the fewest
  // threads and its levels, or c_visit_median and one price without points.
  double c_visit_seconds() const;
  // The model's constants (origin kClassCalibration: c_visit_seconds(), the
  // curve's levels, the medians of fixed and c_pass), with the source "N
  // canaries of class X" ("1 canary of class X").
  CalibratedConstants Constants() const;
};

// `c` as the store keeps it (CalibrationStore), received at `received_at`:
// what ClassCalibrations::LoadFrom reads back.
CalibrationRow CalibrationRowOf(const v1::Calibration& c,
                                absl::Time received_at);

class ClassCalibrations {
 public:
  // Counts `c` in its class (c.hardware_class(); ignored when empty): the
  // host's newest calibration (by measured_at) is the one its class uses.
  // A calibration is (host_id, measured_at), as the store keys it: one
  // counted already changes nothing. Returns whether `c` was new.
  bool Add(const v1::Calibration& c);

  // Adds every stored calibration: at server start, and again whenever a
  // replica sharing the store looks for the others' (class_refresher.h);
  // what was added before is not counted twice. A blob that does not parse
  // is skipped; DataLoss names the first such host after the rest.
  absl::Status LoadFrom(CalibrationStore& store);

  std::optional<ClassConstants> Of(const std::string& hardware_class) const;
  // Every class, by name.
  std::vector<ClassConstants> All() const;
  // Grows with every Add of a calibration not counted before, and only
  // then: loading the same store again leaves it as it is.
  uint64_t version() const;

 private:
  struct Canary {
    int64_t measured_at_ns = 0;
    double c_visit = 0;
    double fixed = 0;
    double c_pass = 0;  // 0: not fitted
    std::optional<CanaryWalk> walk;
  };
  struct Class {
    std::map<std::string, Canary> hosts;
    // Every calibration counted: (host_id, measured_at).
    std::set<std::pair<std::string, int64_t>> counted;
    // Summarize's, made when a calibration is added: Of runs for every
    // report of a host priced by its class.
    ClassConstants summary;
  };
  static ClassConstants Summarize(const std::string& name, const Class& c);
  // Add without the summary: the class `c` was counted in, or null when it
  // has none or was counted already.
  Class* AddLocked(const v1::Calibration& c) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  std::map<std::string, Class> classes_ ABSL_GUARDED_BY(mu_);
  uint64_t version_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_CALIBRATION_CLASS_CALIBRATIONS_H_
