// Helpers that fill a v1::Basis: the inputs, constants, feature rows and
// notes a prediction was computed from, and the confidence derived from how
// many of its inputs were assumed rather than measured.
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
#include "common/format.h"
#include "proto/tracehealth/v1/predictions.pb.h"

namespace tracehealth {

// Appends an input `name` = `value` with its `source`.
void AddInput(v1::Basis* basis, absl::string_view name,
              absl::string_view value, v1::InputSource source);

// Appends a constant with its unit and where the value comes from.
void AddConstant(v1::Basis* basis, absl::string_view name, double value,
                 absl::string_view unit, absl::string_view origin);

void AddNote(v1::Basis* basis, absl::string_view note);
// Appends an empty note and returns it, to be built in place (StrAppend).
std::string* NewNote(v1::Basis* basis);
void AddFeatureRow(v1::Basis* basis, absl::string_view row);

// Sets basis->confidence: 1.0 minus `per_default` for every DEFAULT input,
// minus `per_unknown` for each of `unknown_inputs` (inputs the model needed
// but could not get at all), clamped to [0.05, 1]. MEASURED, DERIVED and
// OVERRIDDEN inputs do not lower it (an override is what the caller asked).
void SetConfidence(v1::Basis* basis, int unknown_inputs = 0,
                   double per_default = 0.1, double per_unknown = 0.3);

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

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_MODELS_BASIS_H_
