// Recording an input the agent could not get: its name in the snapshot
// ("kernel.release") and why ("/proc/sys/kernel/osrelease: not found").
//
// Thread safety: a function of its arguments.
#ifndef TRACEHEALTH_AGENT_COLLECT_UNKNOWN_INPUT_H_
#define TRACEHEALTH_AGENT_COLLECT_UNKNOWN_INPUT_H_

#include <string>

#include "absl/strings/string_view.h"
#include "proto/tracehealth/v1/snapshot.pb.h"

namespace tracehealth::agent {

using UnknownInputs = google::protobuf::RepeatedPtrField<v1::UnknownInput>;

inline void AddUnknown(UnknownInputs* unknown, absl::string_view input,
                       absl::string_view reason) {
  v1::UnknownInput* u = unknown->Add();
  u->set_input(std::string(input));
  u->set_reason(std::string(reason));
}

}  // namespace tracehealth::agent

#endif  // TRACEHEALTH_AGENT_COLLECT_UNKNOWN_INPUT_H_
