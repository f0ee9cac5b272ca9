// Explanations of predictions: the `summary` line and the `basis` lists
// (inputs, constants, feature-table rows, notes) of every prediction,
// written by each model's explanation (fgraph_explain.h,
// stack_depot_explain.h, vmap_explain.h) from the snapshot, the options and
// the prediction's numbers.
//
// They are most of a prediction's bytes (about 6 of a report's 7.5 kB), so
// reports travel without them: the agent predicts (evaluate.h PredictAll)
// and explains only what it prints (--once); the server, which links the
// same models, explains a stored prediction when a query shows it, with
// the feature table the agent used (HostReport.feature_table_override).
// Numbers already in a prediction are never changed: the server shows what
// the agent predicted, explained.
//
// Thread safety: pure functions; safe to call concurrently.
#ifndef TRACEHEALTH_COMMON_MODELS_EXPLAIN_H_
#define TRACEHEALTH_COMMON_MODELS_EXPLAIN_H_

#include "common/models/fgraph/fgraph_attach.h"
#include "common/models/kernel_features.h"
#include "common/models/model_options.h"
#include "proto/tracehealth/v1/predictions.pb.h"
#include "proto/tracehealth/v1/snapshot.pb.h"

namespace tracehealth {

// Whether `summary` or the basis inputs are present. Test-only: the tests
// check with it what ExplainAttach did; production code explains
// unconditionally (ExplainAttach skips an explained prediction itself).
bool HasExplanation(const v1::AttachPrediction& p);

// Explains `*p` (one probe kind, predicted from `snapshot` and `options`),
// if it has no explanation yet.
void ExplainAttach(const v1::HostSnapshot& snapshot,
                   const ModelOptions& options, v1::AttachPrediction* p);

// ExplainAttach for every attach prediction, and the same for the stack
// depot and vmap purge predictions, each only where it has no explanation.
void ExplainPredictions(const v1::HostSnapshot& snapshot,
                        const ModelOptions& options, v1::Predictions* p);

// The same with the snapshot's features and attach context already resolved
// from `options` (as EvaluateAllInto has them).
void ExplainPredictions(const v1::HostSnapshot& snapshot,
                        const ModelOptions& options,
                        const KernelFeatures& features,
                        const AttachContext& context, v1::Predictions* p);

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_MODELS_EXPLAIN_H_
