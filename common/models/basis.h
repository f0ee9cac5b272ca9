// Helpers that fill a v1::Basis, for the models' explanations: the inputs,
// constants, feature rows and notes a prediction was computed from. (Its
// confidence is the numbers' part: model_inputs.h.)
//
// The helpers assign into the elements they add, so a Basis cleared and
// refilled in place reuses its elements' memory.
//
// Thread safety: stateless functions; the Basis passed in is mutated and must
// not be shared across threads during the call.
#ifndef TRACEHEALTH_COMMON_MODELS_BASIS_H_
#define TRACEHEALTH_COMMON_MODELS_BASIS_H_

#include <string>

#include "absl/strings/string_view.h"
#include "proto/tracehealth/v1/predictions.pb.h"

namespace tracehealth {

// Appends an input `name` = `value` with its `source`.
void AddInput(v1::Basis* basis, absl::string_view name, absl::string_view value,
              v1::InputSource source);

// Appends a constant with its unit, where the value comes from and how it
// is anchored (a fit, a published figure, an assumption, an override).
void AddConstant(v1::Basis* basis, absl::string_view name, double value,
                 absl::string_view unit, absl::string_view origin,
                 v1::Anchor anchor);

void AddNote(v1::Basis* basis, absl::string_view note);
// Appends an empty note and returns it, to be built in place (StrAppend).
std::string* NewNote(v1::Basis* basis);
void AddFeatureRow(v1::Basis* basis, absl::string_view row);

// Clears `*message` (a prediction with a `basis` field) but keeps its basis
// allocated, cleared, so the basis's elements are reused when refilled.
// Protobuf's Clear() would delete the basis and everything in it.
template <typename Message>
void ResetKeepingBasis(Message* message) {
  if (message->GetArena() != nullptr || !message->has_basis()) {
    message->Clear();
    return;
  }
  v1::Basis* basis = message->release_basis();
  message->Clear();
  basis->Clear();
  message->set_allocated_basis(basis);
}

// Clears the explanation of `*message` (a prediction): its summary and its
// basis's inputs, constants, feature rows and notes; basis.confidence and
// every number stay. The cleared elements' memory is kept for reuse.
template <typename Message>
void ClearExplanation(Message* message) {
  message->clear_summary();
  v1::Basis* basis = message->mutable_basis();
  basis->clear_inputs();
  basis->clear_constants();
  basis->clear_feature_rows();
  basis->clear_notes();
}

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_MODELS_BASIS_H_
