#include "common/models/evaluate.h"

#include <algorithm>
#include <utility>

#include "common/models/explain.h"
#include "common/models/fgraph/fgraph_attach.h"
#include "common/models/kernel_features.h"
#include "common/models/stackdepot/stack_depot.h"
#include "common/models/vmap/vmap_purge.h"

namespace tracehealth {

v1::AttachPrediction PredictAttach(const v1::HostSnapshot& snapshot,
                                   v1::ProbeKind kind,
                                   const ModelOptions& options) {
  return PredictFgraphAttach(snapshot, kind, options);
}

v1::AttachPrediction EvaluateAttach(const v1::HostSnapshot& snapshot,
                                    v1::ProbeKind kind,
                                    const ModelOptions& options) {
  v1::AttachPrediction p = PredictAttach(snapshot, kind, options);
  ExplainAttach(snapshot, options, &p);
  return p;
}

v1::StackDepotPrediction EvaluateStackDepot(const v1::HostSnapshot& snapshot,
                                            const ModelOptions& options) {
  v1::Predictions p;
  *p.mutable_stack_depot() = PredictStackDepot(snapshot, options);
  ExplainPredictions(snapshot, options, &p);
  return std::move(*p.mutable_stack_depot());
}

v1::VmapPurgePrediction EvaluateVmapPurge(const v1::HostSnapshot& snapshot,
                                          const ModelOptions& options) {
  v1::Predictions p;
  *p.mutable_vmap_purge() = PredictVmapPurge(snapshot, options);
  ExplainPredictions(snapshot, options, &p);
  return std::move(*p.mutable_vmap_purge());
}

void PredictAllInto(const v1::HostSnapshot& snapshot,
                    const ModelOptions& options, v1::Predictions* out) {
  const KernelFeatures features =
      ResolveKernelFeatures(snapshot.kernel(), options);
  const AttachContext context = MakeAttachContext(snapshot, options, features);
  constexpr int kKinds = v1::PROBE_KIND_FENTRY_FEXIT;
  // Elements are refilled in place rather than cleared: clearing a
  // prediction would free its basis.
  while (out->attach_size() > kKinds) out->mutable_attach()->RemoveLast();
  while (out->attach_size() < kKinds) out->add_attach();
  v1::Risk worst = v1::RISK_UNKNOWN;
  for (int k = v1::PROBE_KIND_FUNCTION_GRAPH_TRACER; k <= kKinds; ++k) {
    v1::AttachPrediction* p = out->mutable_attach(k - 1);
    PredictFgraphAttach(snapshot, static_cast<v1::ProbeKind>(k), options,
                        context, p);
    worst = std::max(worst, p->risk());
  }
  PredictStackDepot(snapshot, options, features, out->mutable_stack_depot());
  worst = std::max(worst, out->stack_depot().risk());
  PredictVmapPurge(snapshot, options, features, out->mutable_vmap_purge());
  worst = std::max(worst, out->vmap_purge().risk());
  out->set_worst_risk(worst);
}

v1::Predictions PredictAll(const v1::HostSnapshot& snapshot,
                           const ModelOptions& options) {
  v1::Predictions out;
  PredictAllInto(snapshot, options, &out);
  return out;
}

void EvaluateAllInto(const v1::HostSnapshot& snapshot,
                     const ModelOptions& options, v1::Predictions* out) {
  PredictAllInto(snapshot, options, out);
  ExplainPredictions(snapshot, options, out);
}

v1::Predictions EvaluateAll(const v1::HostSnapshot& snapshot,
                            const ModelOptions& options) {
  v1::Predictions out;
  EvaluateAllInto(snapshot, options, &out);
  return out;
}

}  // namespace tracehealth
