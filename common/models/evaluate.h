// Entry point to the three models: fgraph shadow-stack attach latency, stack
// depot pool budget, KASAN vmalloc purge (docs/design.md §3).
//
// Predict* computes what a report carries: every number, risk and check and
// each basis's confidence. Evaluate* also explains them (explain.h: each
// prediction's summary and basis), as `tracehealth-agent --once` prints and
// the server shows them.
//
// Pure functions of a HostSnapshot plus constants: no I/O, no clock;
// deterministic; safe to call concurrently. The only process state is
// memoisation that never changes an answer: per thread, the last kernel
// release resolved against the built-in feature table. Agent and server link
// the same code, so the server answers what-if queries from stored snapshots
// with these functions.
#ifndef TRACEHEALTH_COMMON_MODELS_EVALUATE_H_
#define TRACEHEALTH_COMMON_MODELS_EVALUATE_H_

#include "common/models/model_options.h"
#include "proto/tracehealth/v1/predictions.pb.h"
#include "proto/tracehealth/v1/snapshot.pb.h"

namespace tracehealth {

// Version of the models, reported in HostReport.model_version.
inline constexpr char kModelVersion[] = "1.0.0";

// All predictions for `snapshot`, without explanations: one AttachPrediction
// per probe kind (PROBE_KIND_FUNCTION_GRAPH_TRACER .. PROBE_KIND_FENTRY_FEXIT,
// in enum order), the stack depot and vmap purge predictions, and the worst
// risk. Missing inputs lower confidence and may make a risk RISK_UNKNOWN;
// they never fail the call.
v1::Predictions PredictAll(const v1::HostSnapshot& snapshot,
                           const ModelOptions& options = {});

// PredictAll into `*out`, replacing its contents. Refilling the same message
// (or one on a protobuf arena) reuses its memory: the form for hot loops
// (the agent's cycle); the result is identical to PredictAll's.
void PredictAllInto(const v1::HostSnapshot& snapshot,
                    const ModelOptions& options, v1::Predictions* out);

// PredictAll with every prediction explained.
v1::Predictions EvaluateAll(const v1::HostSnapshot& snapshot,
                            const ModelOptions& options = {});
void EvaluateAllInto(const v1::HostSnapshot& snapshot,
                     const ModelOptions& options, v1::Predictions* out);

// The attach prediction for one probe kind (what PredictAll puts in `attach`
// for that kind), and the same explained.
v1::AttachPrediction PredictAttach(const v1::HostSnapshot& snapshot,
                                   v1::ProbeKind kind,
                                   const ModelOptions& options = {});
v1::AttachPrediction EvaluateAttach(const v1::HostSnapshot& snapshot,
                                    v1::ProbeKind kind,
                                    const ModelOptions& options = {});

// The stack depot and vmap purge predictions (what PredictAll puts in
// `stack_depot` and `vmap_purge`), explained.
v1::StackDepotPrediction EvaluateStackDepot(const v1::HostSnapshot& snapshot,
                                            const ModelOptions& options = {});
v1::VmapPurgePrediction EvaluateVmapPurge(const v1::HostSnapshot& snapshot,
                                          const ModelOptions& options = {});

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_MODELS_EVALUATE_H_
