// The fgraph attach model's explanation: the one-line summary and the basis
// (inputs with their values, constants, feature-table rows, notes) of an
// attach prediction, written from the snapshot, the options and the
// prediction's numbers (fgraph_attach.h). Numbers are read, never changed.
//
// Thread safety: pure functions; the prediction passed in is mutated.
#ifndef TRACEHEALTH_COMMON_MODELS_FGRAPH_FGRAPH_EXPLAIN_H_
#define TRACEHEALTH_COMMON_MODELS_FGRAPH_FGRAPH_EXPLAIN_H_

#include <string>

#include "common/models/fgraph/fgraph_attach.h"
#include "common/models/model_options.h"
#include "proto/tracehealth/v1/predictions.pb.h"
#include "proto/tracehealth/v1/snapshot.pb.h"

namespace tracehealth {

// Basis values every probe kind of one snapshot shares, rendered once.
struct AttachTexts {
  std::string watchdog_thresh;
  std::string rcu_stall_timeout;
  std::string threads_total;
  std::string null_threads;
  std::string batch;
};
AttachTexts MakeAttachTexts(const v1::HostSnapshot& snapshot,
                            const AttachContext& context);

// Replaces the summary and the basis's inputs, constants, feature rows and
// notes of `*p` (one probe kind, predicted by PredictFgraphAttach from the
// same snapshot and options); basis.confidence is kept. `context` comes
// from MakeAttachContext(snapshot, options, ...), `texts` from
// MakeAttachTexts(snapshot, context).
void ExplainFgraphAttach(const v1::HostSnapshot& snapshot,
                         const ModelOptions& options,
                         const AttachContext& context, const AttachTexts& texts,
                         v1::AttachPrediction* p);

// The same from the kind's case, MakeAttachCase(snapshot, kind, options,
// context), when the caller has it.
void ExplainFgraphAttach(const v1::HostSnapshot& snapshot,
                         const AttachContext& context, const AttachTexts& texts,
                         const AttachCase& kind_case, v1::AttachPrediction* p);

// The same, resolving the snapshot's features, context and texts itself.
void ExplainFgraphAttach(const v1::HostSnapshot& snapshot,
                         const ModelOptions& options, v1::AttachPrediction* p);

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_MODELS_FGRAPH_FGRAPH_EXPLAIN_H_
