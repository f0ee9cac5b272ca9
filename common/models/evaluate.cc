#include "common/models/evaluate.h"

#include <algorithm>

#include "common/models/fgraph_attach.h"
#include "common/models/stack_depot.h"
#include "common/models/vmap_purge.h"

namespace tracehealth {

v1::AttachPrediction PredictAttach(const v1::HostSnapshot& snapshot,
                                   v1::ProbeKind kind,
                                   const ModelOptions& options) {
  return PredictFgraphAttach(snapshot, kind, options);
}

v1::Predictions EvaluateAll(const v1::HostSnapshot& snapshot,
                            const ModelOptions& options) {
  v1::Predictions out;
  v1::Risk worst = v1::RISK_UNKNOWN;
  const AttachContext context = MakeAttachContext(snapshot, options);
  out.mutable_attach()->Reserve(v1::PROBE_KIND_FENTRY_FEXIT);
  for (int k = v1::PROBE_KIND_FUNCTION_GRAPH_TRACER;
       k <= v1::PROBE_KIND_FENTRY_FEXIT; ++k) {
    v1::AttachPrediction* p = out.add_attach();
    *p = PredictFgraphAttach(snapshot, static_cast<v1::ProbeKind>(k), options, context);
    worst = std::max(worst, p->risk());
  }
  *out.mutable_stack_depot() = PredictStackDepot(snapshot, options);
  worst = std::max(worst, out.stack_depot().risk());
  *out.mutable_vmap_purge() = PredictVmapPurge(snapshot, options);
  worst = std::max(worst, out.vmap_purge().risk());
  out.set_worst_risk(worst);
  return out;
}

}  // namespace tracehealth
