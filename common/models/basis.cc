#include "common/models/basis.h"

#include <algorithm>

#include "absl/strings/str_format.h"

namespace tracehealth {

void AddInput(v1::Basis* basis, absl::string_view name,
              absl::string_view value, v1::InputSource source) {
  v1::BasisInput* input = basis->add_inputs();
  input->set_name(std::string(name));
  input->set_value(std::string(value));
  input->set_source(source);
}

void AddConstant(v1::Basis* basis, absl::string_view name, double value,
                 absl::string_view unit, absl::string_view origin) {
  v1::BasisConstant* constant = basis->add_constants();
  constant->set_name(std::string(name));
  constant->set_value(value);
  constant->set_unit(std::string(unit));
  constant->set_origin(std::string(origin));
}

void AddNote(v1::Basis* basis, absl::string_view note) {
  basis->add_notes(std::string(note));
}

void AddFeatureRow(v1::Basis* basis, absl::string_view row) {
  basis->add_feature_rows(std::string(row));
}

void SetConfidence(v1::Basis* basis, int unknown_inputs, double per_default,
                   double per_unknown) {
  double confidence = 1.0;
  for (const v1::BasisInput& input : basis->inputs()) {
    if (input.source() == v1::INPUT_SOURCE_DEFAULT) confidence -= per_default;
  }
  confidence -= per_unknown * unknown_inputs;
  basis->set_confidence(std::clamp(confidence, 0.05, 1.0));
}

std::string FormatNumber(double value) { return absl::StrFormat("%.6g", value); }

}  // namespace tracehealth
