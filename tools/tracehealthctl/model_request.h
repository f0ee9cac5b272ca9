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

// Checks and readers of the flags `predict` shares with `model`. Errors:
// InvalidArgument naming the flag, with the values it takes.
//
// Whole-number flags below -1 ("not given"), real ones negative or not
// finite: "--threads must be >= 0".
absl::Status CheckModelFlagRanges();
// "" is not given; else true|false (absl's spellings: 1/0, yes/no too).
absl::StatusOr<std::optional<bool>> BoolFlag(const std::string& name,
                                             const std::string& value);
// --preempt (none|voluntary|full|lazy|rt); nullopt when not given.
absl::StatusOr<std::optional<v1::PreemptMode>> PreemptFlag();
// --probe (a ProbeKindFlags() name, or the enum's without PROBE_KIND_);
// nullopt when not given.
absl::StatusOr<std::optional<v1::ProbeKind>> ProbeFlag();

}  // namespace tracehealth

#endif  // TRACEHEALTH_TOOLS_TRACEHEALTHCTL_MODEL_REQUEST_H_
