// Finding a threshold check in a model's prediction, for the models' tests.
#ifndef TRACEHEALTH_COMMON_MODELS_TESTING_PREDICTION_CHECKS_H_
#define TRACEHEALTH_COMMON_MODELS_TESTING_PREDICTION_CHECKS_H_

#include "proto/tracehealth/v1/predictions.pb.h"

namespace tracehealth::testing {

// The first check of `kind` in `p`, or nullptr when `p` has none.
inline const v1::ThresholdCheck* FindCheck(const v1::AttachPrediction& p,
                                           v1::ThresholdCheck::Kind kind) {
  for (const auto& c : p.checks()) {
    if (c.kind() == kind) return &c;
  }
  return nullptr;
}

}  // namespace tracehealth::testing

#endif  // TRACEHEALTH_COMMON_MODELS_TESTING_PREDICTION_CHECKS_H_
