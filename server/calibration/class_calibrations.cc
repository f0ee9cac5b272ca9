#include "server/calibration/class_calibrations.h"

#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/models/calibrated_constants.h"
#include "common/proto_time.h"
#include "server/calibration/median.h"

namespace tracehealth::server {

double ClassConstants::c_visit_seconds() const {
  return curve.points > 0 ? curve.c_visit_seconds : c_visit_median;
}

CalibratedConstants ClassConstants::Constants() const {
  CalibratedConstants k;
  k.c_visit_seconds = c_visit_seconds();
  k.visit_levels = curve.levels;
  k.fixed_seconds = fixed_median;
  k.c_pass_seconds = c_pass_median;
  k.origin = ConstantsOrigin::kClassCalibration;
  k.source = ClassCalibrationSource(canaries, hardware_class);
  return k;
}

CalibrationRow CalibrationRowOf(const v1::Calibration& c,
                                absl::Time received_at) {
  CalibrationRow row;
  row.host_id = c.host_id();
  row.hardware_class = c.hardware_class();
  row.measured_at_ns = absl::ToUnixNanos(FromProto(c.measured_at()));
  row.c_visit_seconds = c.c_visit_seconds();
  row.fixed_seconds = c.fixed_seconds();
  row.received_at_ns = absl::ToUnixNanos(received_at);
  row.blob = c.SerializeAsString();
  return row;
}

bool ClassCalibrations::Add(const v1::Calibration& c) {
  absl::MutexLock lock(&mu_);
  Class* cls = AddLocked(c);
  if (cls == nullptr) return false;
  cls->summary = Summarize(c.hardware_class(), *cls);
  return true;
}

ClassCalibrations::Class* ClassCalibrations::AddLocked(
    const v1::Calibration& c) {
  if (c.hardware_class().empty()) return nullptr;
  const int64_t at = absl::ToUnixNanos(FromProto(c.measured_at()));
  Class& cls = classes_[c.hardware_class()];
  if (!cls.counted.emplace(c.host_id(), at).second) return nullptr;
  ++version_;
  auto [it, inserted] = cls.hosts.try_emplace(c.host_id());
  if (inserted || at >= it->second.measured_at_ns) {
    it->second =
        Canary{at, c.c_visit_seconds(), c.fixed_seconds(),
               c.c_pass_fitted() ? c.c_pass_seconds() : 0, CanaryWalkOf(c)};
  }
  return &cls;
}

absl::Status ClassCalibrations::LoadFrom(CalibrationStore& store) {
  absl::StatusOr<std::vector<CalibrationRow>> rows = store.ListCalibrations();
  if (!rows.ok()) return rows.status();
  absl::Status first;
  std::vector<v1::Calibration> parsed;
  parsed.reserve(rows->size());
  for (const CalibrationRow& row : *rows) {
    v1::Calibration c;
    if (!c.ParseFromString(row.blob)) {
      if (first.ok()) {
        first = absl::DataLossError(absl::StrCat(
            "calibration of host ", row.host_id, " does not parse"));
      }
      continue;
    }
    parsed.push_back(std::move(c));
  }
  // Each class that gained a calibration is summarized once, after all of
  // them, not once per calibration.
  absl::MutexLock lock(&mu_);
  std::set<std::string> touched;
  for (const v1::Calibration& c : parsed) {
    if (AddLocked(c) != nullptr) touched.insert(c.hardware_class());
  }
  for (const std::string& name : touched) {
    Class& cls = classes_[name];
    cls.summary = Summarize(name, cls);
  }
  return first;
}

ClassConstants ClassCalibrations::Summarize(const std::string& name,
                                            const Class& c) {
  ClassConstants out;
  out.hardware_class = name;
  out.canaries = static_cast<uint32_t>(c.hosts.size());
  out.calibrations = static_cast<uint32_t>(c.counted.size());
  std::vector<double> visits, fixed, passes;
  std::vector<CanaryWalk> walks;
  for (const auto& [host, canary] : c.hosts) {
    visits.push_back(canary.c_visit);
    fixed.push_back(canary.fixed);
    if (canary.c_pass > 0) passes.push_back(canary.c_pass);
    if (canary.walk) walks.push_back(*canary.walk);
  }
  out.curve = FitClassCurve(std::move(walks));
  out.c_visit_median = Median(visits);
  out.fixed_median = Median(fixed);
  out.c_pass_median = Median(passes);
  if (!visits.empty()) {
    out.c_visit_min = *std::min_element(visits.begin(), visits.end());
    out.c_visit_max = *std::max_element(visits.begin(), visits.end());
  }
  return out;
}

std::optional<ClassConstants> ClassCalibrations::Of(
    const std::string& hardware_class) const {
  absl::MutexLock lock(&mu_);
  auto it = classes_.find(hardware_class);
  if (it == classes_.end()) return std::nullopt;
  return it->second.summary;
}

std::vector<ClassConstants> ClassCalibrations::All() const {
  absl::MutexLock lock(&mu_);
  std::vector<ClassConstants> out;
  out.reserve(classes_.size());
  for (const auto& [name, cls] : classes_) out.push_back(cls.summary);
  return out;
}

uint64_t ClassCalibrations::version() const {
  absl::MutexLock lock(&mu_);
  return version_;
}

}  // namespace tracehealth::server
