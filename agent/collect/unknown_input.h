// Recording an input the agent could not get: its name in the snapshot
// ("kernel.release") and why ("/proc/sys/kernel/osrelease: not found"); and
// an input the kernel does not have at all (not applicable: an option its
// release lacks, a feature its config leaves out), which is no gap in what
// the agent knows.
//
// Thread safety: a function of its arguments.
#ifndef TRACEHEALTH_AGENT_COLLECT_UNKNOWN_INPUT_H_
#define TRACEHEALTH_AGENT_COLLECT_UNKNOWN_INPUT_H_

#include <string>

#include "absl/strings/string_view.h"
#include "proto/tracehealth/v1/snapshot.pb.h"

namespace tracehealth::agent {

using UnknownInputs = google::protobuf::RepeatedPtrField<v1::UnknownInput>;
using NotApplicableInputs =
    google::protobuf::RepeatedPtrField<v1::NotApplicableInput>;

inline void AddUnknown(UnknownInputs* unknown, absl::string_view input,
                       absl::string_view reason) {
  v1::UnknownInput* u = unknown->Add();
  u->set_input(std::string(input));
  u->set_reason(std::string(reason));
}

inline void AddNotApplicable(NotApplicableInputs* not_applicable,
                             absl::string_view input,
                             absl::string_view reason) {
  v1::NotApplicableInput* n = not_applicable->Add();
  n->set_input(std::string(input));
  n->set_reason(std::string(reason));
}

}  // namespace tracehealth::agent

#endif  // TRACEHEALTH_AGENT_COLLECT_UNKNOWN_INPUT_H_
