// The inputs of `tracehealthctl model fgraph|stackdepot|vmap`, from flags:
// a HostSnapshot holding what the flags give (everything else unknown, as
// for a host that could not read it), the models' what-if options, and the
// basis inputs the flags gave (shown as "given").
//
// The flags are absl flags defined in model_request.cc (tracehealthctl's
// predict command shares some of them); tracehealthctl's main parses them.
//
// Thread safety: reads the process's flags; call from one thread.
#ifndef TRACEHEALTH_TOOLS_TRACEHEALTHCTL_MODEL_REQUEST_H_
#define TRACEHEALTH_TOOLS_TRACEHEALTHCTL_MODEL_REQUEST_H_

#include <optional>
#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "common/models/model_options.h"
#include "proto/tracehealth/v1/predictions.pb.h"
#include "proto/tracehealth/v1/snapshot.pb.h"

namespace tracehealth {

struct ModelRequest {
  v1::HostSnapshot snapshot;
  ModelOptions options;
  // Basis input names whose values came from flags.
  std::set<std::string> given;
  // --probe: one attach kind; unset: all of them.
  std::optional<v1::ProbeKind> probe;
};

// The request for `model` ("fgraph", "stackdepot" or "vmap") from the flags.
// Errors: InvalidArgument naming the flag (a number out of range, an
// unparsable release, preemption mode, boolean, probe kind or history) or
// an unknown model; NotFound for an unreadable --show_stacks file.
absl::StatusOr<ModelRequest> BuildModelRequest(const std::string& model);

}  // namespace tracehealth

#endif  // TRACEHEALTH_TOOLS_TRACEHEALTHCTL_MODEL_REQUEST_H_
