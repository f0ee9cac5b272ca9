#include "common/models/model_inputs.h"

#include <algorithm>

namespace tracehealth {

double Confidence(int default_inputs, int unknown_inputs) {
  return Confidence(default_inputs, unknown_inputs, 0.0);
}

double Confidence(int default_inputs, int unknown_inputs, double other_loss) {
  // One subtraction per default input, in this order: reports of every
  // version carry the same bits for the same inputs (1 - 0.1 - 0.1 - 0.1 is
  // not 1 - 0.3 in binary).
  double confidence = 1.0;
  for (int i = 0; i < default_inputs; ++i) confidence -= kConfidencePerDefault;
  confidence -= kConfidencePerUnknown * unknown_inputs;
  if (other_loss > 0) confidence -= other_loss;
  return std::clamp(confidence, 0.05, 1.0);
}

const v1::NotApplicableInput* FindNotApplicable(
    const v1::HostSnapshot& snapshot, absl::string_view input) {
  for (const v1::NotApplicableInput& n : snapshot.not_applicable()) {
    if (n.input() == input) return &n;
  }
  return nullptr;
}

}  // namespace tracehealth
