// The vmap purge model's explanation: the summary and the basis (inputs with
// their values, constants, feature-table rows, notes) of a vmap purge
// prediction, written from the snapshot and the prediction's numbers
// (vmap_purge.h). Numbers are read, never changed.
//
// Thread safety: pure functions; the prediction passed in is mutated.
#ifndef TRACEHEALTH_COMMON_MODELS_VMAP_VMAP_EXPLAIN_H_
#define TRACEHEALTH_COMMON_MODELS_VMAP_VMAP_EXPLAIN_H_

#include "common/models/kernel_features.h"
#include "proto/tracehealth/v1/predictions.pb.h"
#include "proto/tracehealth/v1/snapshot.pb.h"

namespace tracehealth {

// Replaces the summary and the basis's lists of `*p` (predicted by
// PredictVmapPurge from the same snapshot and features); basis.confidence
// is kept.
void ExplainVmapPurge(const v1::HostSnapshot& snapshot,
                      const KernelFeatures& features,
                      v1::VmapPurgePrediction* p);

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_MODELS_VMAP_VMAP_EXPLAIN_H_
