// Explanations of predictions: the `summary` line and the `basis` (inputs,
// constants, feature-table rows, notes) of every prediction.
//
// They are a pure function of the snapshot and the model version, and they
// are most of a report's bytes (about 6 of 7.5 kB). The agent therefore
// sends its predictions without them (`DropExplanations`: numbers, risks,
// checks and `basis.confidence` stay) and the server, which links the same
// models, re-derives them from the stored snapshot when a query shows a
// prediction (`Explain*`). Numbers already in a prediction are never
// changed: the server shows what the agent predicted, explained.
//
// Thread safety: pure functions; safe to call concurrently.
#ifndef TRACEHEALTH_COMMON_MODELS_EXPLAIN_H_
#define TRACEHEALTH_COMMON_MODELS_EXPLAIN_H_

#include "common/models/model_options.h"
#include "proto/tracehealth/v1/predictions.pb.h"
#include "proto/tracehealth/v1/snapshot.pb.h"

namespace tracehealth {

// Clears `summary` and every basis field except `confidence` in each
// prediction of `*p`.
void DropExplanations(v1::Predictions* p);

// Whether `summary` or the basis inputs are present.
bool HasExplanation(const v1::AttachPrediction& p);

// Fills the summary and basis of `*p` (one probe kind) from the models run
// on `snapshot`, if it has none. `basis.confidence` is the model's.
void ExplainAttach(const v1::HostSnapshot& snapshot, const ModelOptions& options,
                   v1::AttachPrediction* p);

// ExplainAttach for every attach prediction, and the same for the stack
// depot and vmap purge predictions, each only where it has no explanation.
void ExplainPredictions(const v1::HostSnapshot& snapshot, const ModelOptions& options,
                        v1::Predictions* p);

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_MODELS_EXPLAIN_H_
