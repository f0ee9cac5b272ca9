// What a prediction was computed from, kept by the numbers of a model
// without rendering anything: which inputs it used, in the order its basis
// lists them, each with where its value came from; and the confidence that
// follows from how many of them were assumed.
//
// The numbers (e.g. fgraph_attach.cc) fill a ModelInputs and set
// basis.confidence from it; the explanation (e.g. fgraph_explain.cc) lists
// the same inputs, with their values, in the basis. One list serves both, so
// a report's confidence always counts the inputs its explanation shows.
//
// Thread safety: a plain value.
#ifndef TRACEHEALTH_COMMON_MODELS_MODEL_INPUTS_H_
#define TRACEHEALTH_COMMON_MODELS_MODEL_INPUTS_H_

#include <array>
#include <cstddef>

#include "absl/strings/string_view.h"
#include "proto/tracehealth/v1/predictions.pb.h"
#include "proto/tracehealth/v1/snapshot.pb.h"

namespace tracehealth {

// Confidence lost per input the model took a default for, and per input it
// needed but could not get at all.
inline constexpr double kConfidencePerDefault = 0.1;
inline constexpr double kConfidencePerUnknown = 0.3;

// 1 - 0.1 * default_inputs - 0.3 * unknown_inputs, clamped to [0.05, 1].
// MEASURED, DERIVED, OVERRIDDEN and NOT_APPLICABLE inputs do not lower it (an
// override is what the caller asked; a kernel without the input misses
// nothing).
double Confidence(int default_inputs, int unknown_inputs);
// The same, less `other_loss` before clamping (e.g. constants applied to a
// CPU class they were not fitted on: cpu_class.h).
double Confidence(int default_inputs, int unknown_inputs, double other_loss);

// The snapshot's entry saying the kernel has no input `input`, or nullptr.
const v1::NotApplicableInput* FindNotApplicable(
    const v1::HostSnapshot& snapshot, absl::string_view input);

// Up to kMax inputs named by a model's own enum `Id`.
template <typename Id, size_t kMax>
class ModelInputs {
 public:
  struct Entry {
    Id id;
    v1::InputSource source;
  };

  // Appends `id`; beyond kMax entries the input is dropped (a model lists a
  // fixed set, well below its kMax).
  void Add(Id id, v1::InputSource source) {
    if (size_ < kMax) entries_[size_++] = Entry{id, source};
  }
  int Defaults() const {
    int n = 0;
    for (size_t i = 0; i < size_; ++i)
      n += entries_[i].source == v1::INPUT_SOURCE_DEFAULT;
    return n;
  }
  size_t size() const { return size_; }
  const Entry* begin() const { return entries_.data(); }
  const Entry* end() const { return entries_.data() + size_; }

 private:
  std::array<Entry, kMax> entries_{};
  size_t size_ = 0;
};

// Ends a prediction of a model that does not apply to the host (say, no
// KASAN): RISK_NONE when the config that says so was read, RISK_UNKNOWN when
// it was not, and the confidence of the inputs looked at.
template <typename Prediction, typename Inputs>
void SetNotApplying(bool config_known, const Inputs& inputs, int unknown_inputs,
                    Prediction* out) {
  out->set_applies(false);
  out->set_risk(config_known ? v1::RISK_NONE : v1::RISK_UNKNOWN);
  out->mutable_basis()->set_confidence(
      Confidence(inputs.Defaults(), unknown_inputs));
}

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_MODELS_MODEL_INPUTS_H_
