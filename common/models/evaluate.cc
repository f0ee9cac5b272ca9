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

// What a snapshot's predictions are made (and explained) from: its
// features, the attach context and the ten kinds' cases (ProbeKind order).
// The context points into the features: built in place, never copied.
struct Resolved {
  Resolved(const v1::HostSnapshot& snapshot, const ModelOptions& options)
      : features(ResolveKernelFeatures(snapshot.kernel(), options)),
        context(MakeAttachContext(snapshot, options, features)) {
    for (int k = 0; k < kKinds; ++k) {
      const auto kind =
          static_cast<v1::ProbeKind>(v1::PROBE_KIND_FUNCTION_GRAPH_TRACER + k);
      cases[k] = MakeAttachCase(snapshot, kind, options, context);
    }
  }
  Resolved(const Resolved&) = delete;
  Resolved& operator=(const Resolved&) = delete;

  const KernelFeatures features;
  const AttachContext context;
  AttachCase cases[kKinds];
};

void PredictAllWith(const v1::HostSnapshot& snapshot,
                    const ModelOptions& options, const Resolved& r,
                    v1::Predictions* out) {
  // Elements are refilled in place rather than cleared: clearing a
  // prediction would free its basis.
  while (out->attach_size() > kKinds) out->mutable_attach()->RemoveLast();
  while (out->attach_size() < kKinds) out->add_attach();
  v1::Risk worst = v1::RISK_UNKNOWN;
  for (int k = 0; k < kKinds; ++k) {
    v1::AttachPrediction* p = out->mutable_attach(k);
    PredictFgraphAttach(snapshot, options, r.context, r.cases[k], p);
    worst = std::max(worst, p->risk());
  }
  PredictStackDepot(snapshot, options, r.features, out->mutable_stack_depot());
  worst = std::max(worst, out->stack_depot().risk());
  PredictVmapPurge(snapshot, options, r.features, out->mutable_vmap_purge());
  worst = std::max(worst, out->vmap_purge().risk());
  out->set_worst_risk(worst);
}

}  // namespace

void PredictAllInto(const v1::HostSnapshot& snapshot,
                    const ModelOptions& options, v1::Predictions* out) {
  PredictAllWith(snapshot, options, Resolved(snapshot, options), out);
}

v1::Predictions PredictAll(const v1::HostSnapshot& snapshot,
                           const ModelOptions& options) {
  v1::Predictions out;
  PredictAllInto(snapshot, options, &out);
  return out;
}

void EvaluateAllInto(const v1::HostSnapshot& snapshot,
                     const ModelOptions& options, v1::Predictions* out) {
  const Resolved r(snapshot, options);
  PredictAllWith(snapshot, options, r, out);
  const AttachTexts texts = MakeAttachTexts(snapshot, r.context);
  for (int k = 0; k < kKinds; ++k) {
    ExplainFgraphAttach(snapshot, r.context, texts, r.cases[k],
                        out->mutable_attach(k));
  }
  ExplainStackDepot(snapshot, r.features, out->mutable_stack_depot());
  ExplainVmapPurge(snapshot, r.features, out->mutable_vmap_purge());
}

v1::Predictions EvaluateAll(const v1::HostSnapshot& snapshot,
                            const ModelOptions& options) {
  v1::Predictions out;
  EvaluateAllInto(snapshot, options, &out);
  return out;
}

}  // namespace tracehealth
