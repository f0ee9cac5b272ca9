#include "common/models/explain.h"

#include "common/models/fgraph/fgraph_explain.h"
#include "common/models/kernel_features.h"
#include "common/models/stackdepot/stack_depot_explain.h"
#include "common/models/vmap/vmap_explain.h"

namespace tracehealth {
namespace {

template <typename P>
bool Explained(const P& p) {
  return !p.summary().empty() || p.basis().inputs_size() > 0;
}

}  // namespace

bool HasExplanation(const v1::AttachPrediction& p) { return Explained(p); }

void ExplainAttach(const v1::HostSnapshot& snapshot,
                   const ModelOptions& options, v1::AttachPrediction* p) {
  if (!Explained(*p)) ExplainFgraphAttach(snapshot, options, p);
}

void ExplainPredictions(const v1::HostSnapshot& snapshot,
                        const ModelOptions& options, v1::Predictions* p) {
  bool missing = (p->has_stack_depot() && !Explained(p->stack_depot())) ||
                 (p->has_vmap_purge() && !Explained(p->vmap_purge()));
  for (const v1::AttachPrediction& a : p->attach())
    missing = missing || !Explained(a);
  if (!missing) return;
  const KernelFeatures features =
      ResolveKernelFeatures(snapshot.kernel(), options);
  ExplainPredictions(snapshot, options, features,
                     MakeAttachContext(snapshot, options, features), p);
}

void ExplainPredictions(const v1::HostSnapshot& snapshot,
                        const ModelOptions& options,
                        const KernelFeatures& features,
                        const AttachContext& context, v1::Predictions* p) {
  if (p->attach_size() > 0) {
    const AttachTexts texts = MakeAttachTexts(snapshot, context);
    for (v1::AttachPrediction& a : *p->mutable_attach()) {
      if (!Explained(a))
        ExplainFgraphAttach(snapshot, options, context, texts, &a);
    }
  }
  if (p->has_stack_depot() && !Explained(p->stack_depot())) {
    ExplainStackDepot(snapshot, features, p->mutable_stack_depot());
  }
  if (p->has_vmap_purge() && !Explained(p->vmap_purge())) {
    ExplainVmapPurge(snapshot, features, p->mutable_vmap_purge());
  }
}

}  // namespace tracehealth
