#include "common/models/explain.h"

#include "common/models/evaluate.h"

namespace tracehealth {
namespace {

void DropBasis(v1::Basis* b) {
  const double confidence = b->confidence();
  b->Clear();
  b->set_confidence(confidence);
}

// Moves the explanation of `from` into `to` (same prediction type).
template <typename P>
void TakeExplanation(P* from, P* to) {
  to->set_summary(std::move(*from->mutable_summary()));
  to->mutable_basis()->Swap(from->mutable_basis());
}

template <typename P>
bool Explained(const P& p) {
  return !p.summary().empty() || p.basis().inputs_size() > 0;
}

}  // namespace

void DropExplanations(v1::Predictions* p) {
  for (v1::AttachPrediction& a : *p->mutable_attach()) {
    a.clear_summary();
    DropBasis(a.mutable_basis());
  }
  if (p->has_stack_depot()) {
    p->mutable_stack_depot()->clear_summary();
    DropBasis(p->mutable_stack_depot()->mutable_basis());
  }
  if (p->has_vmap_purge()) {
    p->mutable_vmap_purge()->clear_summary();
    DropBasis(p->mutable_vmap_purge()->mutable_basis());
  }
}

bool HasExplanation(const v1::AttachPrediction& p) { return Explained(p); }

void ExplainAttach(const v1::HostSnapshot& snapshot, const ModelOptions& options,
                   v1::AttachPrediction* p) {
  if (Explained(*p)) return;
  v1::AttachPrediction fresh = PredictAttach(snapshot, p->probe_kind(), options);
  TakeExplanation(&fresh, p);
}

void ExplainPredictions(const v1::HostSnapshot& snapshot, const ModelOptions& options,
                        v1::Predictions* p) {
  bool missing = !Explained(p->stack_depot()) || !Explained(p->vmap_purge());
  for (const v1::AttachPrediction& a : p->attach()) missing = missing || !Explained(a);
  if (!missing) return;
  v1::Predictions fresh = EvaluateAll(snapshot, options);
  for (v1::AttachPrediction& a : *p->mutable_attach()) {
    if (Explained(a)) continue;
    for (v1::AttachPrediction& f : *fresh.mutable_attach()) {
      if (f.probe_kind() == a.probe_kind()) {
        TakeExplanation(&f, &a);
        break;
      }
    }
  }
  if (p->has_stack_depot() && !Explained(p->stack_depot())) {
    TakeExplanation(fresh.mutable_stack_depot(), p->mutable_stack_depot());
  }
  if (p->has_vmap_purge() && !Explained(p->vmap_purge())) {
    TakeExplanation(fresh.mutable_vmap_purge(), p->mutable_vmap_purge());
  }
}

}  // namespace tracehealth
