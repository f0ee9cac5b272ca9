// The stack depot model's explanation: the summary and the basis (inputs
// with their values, constants, feature-table rows, notes) of a stack depot
// prediction, written from the snapshot and the prediction's numbers
// (stack_depot.h). Numbers are read, never changed.
//
// Thread safety: pure functions; the prediction passed in is mutated.
#ifndef TRACEHEALTH_COMMON_MODELS_STACKDEPOT_STACK_DEPOT_EXPLAIN_H_
#define TRACEHEALTH_COMMON_MODELS_STACKDEPOT_STACK_DEPOT_EXPLAIN_H_

#include "common/models/kernel_features.h"
#include "proto/tracehealth/v1/predictions.pb.h"
#include "proto/tracehealth/v1/snapshot.pb.h"

namespace tracehealth {

// Replaces the summary and the basis's lists of `*p` (predicted by
// PredictStackDepot from the same snapshot and features); basis.confidence
// is kept.
void ExplainStackDepot(const v1::HostSnapshot& snapshot,
                       const KernelFeatures& features,
                       v1::StackDepotPrediction* p);

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_MODELS_STACKDEPOT_STACK_DEPOT_EXPLAIN_H_
