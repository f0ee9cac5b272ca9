#include "common/models/evaluate.h"

#include <algorithm>
#include <utility>

#include "common/models/explain.h"
#include "common/models/fgraph/fgraph_attach.h"
#include "common/models/fgraph/fgraph_explain.h"
#include "common/models/kernel_features.h"
#include "common/models/stackdepot/stack_depot.h"
#include "common/models/stackdepot/stack_depot_explain.h"
#include "common/models/vmap/vmap_explain.h"
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

namespace {

constexpr int kKinds = v1::PROBE_KIND_FENTRY_FEXIT;

// The ten kinds' cases, in ProbeKind order: made once for the numbers and
// their explanations.
struct AttachCases {
  AttachCase kinds[kKinds];
};

void MakeCases(const v1::HostSnapshot& snapshot, const ModelOptions& options,
               const AttachContext& context, AttachCases* cases) {
  for (int k = 0; k < kKinds; ++k) {
    const auto kind =
        static_cast<v1::ProbeKind>(v1::PROBE_KIND_FUNCTION_GRAPH_TRACER + k);
    cases->kinds[k] = MakeAttachCase(snapshot, kind, options, context);
  }
}

void PredictAllWith(const v1::HostSnapshot& snapshot,
                    const ModelOptions& options, const KernelFeatures& features,
                    const AttachContext& context, const AttachCases& cases,
                    v1::Predictions* out) {
  // Elements are refilled in place rather than cleared: clearing a
  // prediction would free its basis.
  while (out->attach_size() > kKinds) out->mutable_attach()->RemoveLast();
  while (out->attach_size() < kKinds) out->add_attach();
  v1::Risk worst = v1::RISK_UNKNOWN;
  for (int k = 0; k < kKinds; ++k) {
    v1::AttachPrediction* p = out->mutable_attach(k);
    PredictFgraphAttach(snapshot, options, context, cases.kinds[k], p);
    worst = std::max(worst, p->risk());
  }
  PredictStackDepot(snapshot, options, features, out->mutable_stack_depot());
  worst = std::max(worst, out->stack_depot().risk());
  PredictVmapPurge(snapshot, options, features, out->mutable_vmap_purge());
  worst = std::max(worst, out->vmap_purge().risk());
  out->set_worst_risk(worst);
}

}  // namespace

void PredictAllInto(const v1::HostSnapshot& snapshot,
                    const ModelOptions& options, v1::Predictions* out) {
  const KernelFeatures features =
      ResolveKernelFeatures(snapshot.kernel(), options);
  const AttachContext context = MakeAttachContext(snapshot, options, features);
  AttachCases cases;
  MakeCases(snapshot, options, context, &cases);
  PredictAllWith(snapshot, options, features, context, cases, out);
}

v1::Predictions PredictAll(const v1::HostSnapshot& snapshot,
                           const ModelOptions& options) {
  v1::Predictions out;
  PredictAllInto(snapshot, options, &out);
  return out;
}

void EvaluateAllInto(const v1::HostSnapshot& snapshot,
                     const ModelOptions& options, v1::Predictions* out) {
  const KernelFeatures features =
      ResolveKernelFeatures(snapshot.kernel(), options);
  const AttachContext context = MakeAttachContext(snapshot, options, features);
  AttachCases cases;
  MakeCases(snapshot, options, context, &cases);
  PredictAllWith(snapshot, options, features, context, cases, out);
  const AttachTexts texts = MakeAttachTexts(snapshot, context);
  for (int k = 0; k < kKinds; ++k) {
    ExplainFgraphAttach(snapshot, context, texts, cases.kinds[k],
                        out->mutable_attach(k));
  }
  ExplainStackDepot(snapshot, features, out->mutable_stack_depot());
  ExplainVmapPurge(snapshot, features, out->mutable_vmap_purge());
}

v1::Predictions EvaluateAll(const v1::HostSnapshot& snapshot,
                            const ModelOptions& options) {
  v1::Predictions out;
  EvaluateAllInto(snapshot, options, &out);
  return out;
}

}  // namespace tracehealth
