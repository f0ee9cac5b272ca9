// The what-if of `tracehealthctl predict` and `plan`, from the model flags
// (model_request.h): --threads, --null_threads, --batch, --preempt,
// --kernel, --c_visit_ns, --latency_budget, --fgraph_active. A flag not
// given (-1, or "" for text) leaves its field unset.
#ifndef TRACEHEALTH_TOOLS_TRACEHEALTHCTL_WHAT_IF_FLAGS_H_
#define TRACEHEALTH_TOOLS_TRACEHEALTHCTL_WHAT_IF_FLAGS_H_

#include "absl/status/statusor.h"
#include "proto/tracehealth/v1/query.pb.h"
#include "tools/tracehealthctl/model_request.h"

namespace tracehealth {

// The what-if the flags give. INVALID_ARGUMENT naming the flag and the
// values it takes for one out of range (a negative count, --batch outside
// 1..1048576, a zero cost or budget) or a name it does not know.
absl::StatusOr<v1::WhatIf> WhatIfFromFlags(const ModelFlags& flags);

}  // namespace tracehealth

#endif  // TRACEHEALTH_TOOLS_TRACEHEALTHCTL_WHAT_IF_FLAGS_H_
