#include "agent/calibrate/calibration_store.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "agent/state/state_file.h"
#include "common/proto_json.h"
#include "google/protobuf/util/json_util.h"

namespace tracehealth::agent {
namespace {

std::string CalibrationPath(absl::string_view state_dir) {
  return absl::StrCat(state_dir, "/", kCalibrationFile);
}

}  // namespace

std::string CalibrationJson(const v1::Calibration& calibration) {
  absl::StatusOr<std::string> json = ProtoToJson(calibration);
  if (!json.ok()) {
    return absl::StrCat("{\"error\": \"", json.status().message(), "\"}");
  }
  return *json;
}

absl::Status SaveCalibration(absl::string_view state_dir,
                             const v1::Calibration& calibration) {
  return WriteFileAtomically(CalibrationPath(state_dir),
                             CalibrationJson(calibration) + "\n");
}

absl::StatusOr<std::optional<v1::Calibration>> LoadCalibration(
    absl::string_view state_dir) {
  const std::string path = CalibrationPath(state_dir);
  absl::StatusOr<std::string> text = ReadWholeFile(path);
  if (absl::IsNotFound(text.status())) return std::nullopt;
  if (!text.ok()) return text.status();
  v1::Calibration c;
  auto s = google::protobuf::util::JsonStringToMessage(*text, &c);
  if (!s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": ", s.message().as_string()));
  }
  if (!(c.c_visit_seconds() > 0) || !std::isfinite(c.c_visit_seconds())) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": c_visit_seconds must be positive"));
  }
  return c;
}

}  // namespace tracehealth::agent
