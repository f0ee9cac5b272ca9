#include "server/calibration/calibrated_report.h"

#include <utility>

#include "common/kernel/feature_table_override.h"
#include "common/models/calibrated_constants.h"
#include "common/models/evaluate.h"
#include "common/models/fgraph/hardware_class.h"

namespace tracehealth::server {

std::string ReportHardwareClass(const v1::HostReport& r) {
  return HardwareClass(r.snapshot().cpus().model_name(),
                       r.snapshot().kernel().release());
}

std::optional<CalibratedConstants> ReportCalibration(const v1::HostReport& r) {
  if (!r.has_calibration() || !(r.calibration().c_visit_seconds() > 0)) {
    return std::nullopt;
  }
  return ConstantsOf(r.calibration());
}

ModelOptions HostModelOptions(const v1::HostReport& r,
                              std::optional<FeatureTable>* table) {
  ModelOptions options;
  options.calibration = ReportCalibration(r);
  if (!r.has_feature_table_override()) return options;
  absl::StatusOr<FeatureTable> t =
      FeatureTableFromOverride(r.feature_table_override());
  if (t.ok()) {
    table->emplace(*std::move(t));
    options.features = &**table;
  }
  return options;
}

std::shared_ptr<const v1::HostReport> WithClassCalibration(
    std::shared_ptr<const v1::HostReport> r, const ClassCalibrations* classes) {
  if (classes == nullptr || r->has_calibration()) return r;
  const std::string cls = ReportHardwareClass(*r);
  if (cls.empty()) return r;
  std::optional<ClassConstants> k = classes->Of(cls);
  if (!k || !(k->c_visit_seconds() > 0)) return r;
  auto out = std::make_shared<v1::HostReport>(*r);
  v1::Calibration* c = out->mutable_calibration();
  c->set_hardware_class(cls);
  c->set_class_canaries(k->canaries);
  c->set_origin(v1::CONSTANTS_ORIGIN_CLASS_CALIBRATION);
  c->set_c_visit_seconds(k->c_visit_seconds());
  for (const VisitLevel& l : k->curve.levels) {
    v1::VisitLevel* level = c->add_visit_levels();
    level->set_from_tasks(l.from_tasks);
    level->set_factor(l.factor);
  }
  c->set_fixed_seconds(k->fixed_median);
  if (k->c_pass_median > 0) {
    c->set_c_pass_seconds(k->c_pass_median);
    c->set_c_pass_fitted(true);
  }
  std::optional<FeatureTable> table;
  ModelOptions options = HostModelOptions(*out, &table);
  options.calibration = k->Constants();
  PredictAllInto(out->snapshot(), options, out->mutable_predictions());
  return out;
}

}  // namespace tracehealth::server
