// The what-if of `tracehealthctl predict` and `plan`, from the model flags
// (model_request.cc): --threads, --null_threads, --batch, --preempt,
// --kernel, --c_visit_ns, --latency_budget, --fgraph_active.
#ifndef TRACEHEALTH_TOOLS_TRACEHEALTHCTL_WHAT_IF_FLAGS_H_
#define TRACEHEALTH_TOOLS_TRACEHEALTHCTL_WHAT_IF_FLAGS_H_

#include <ostream>

#include "proto/tracehealth/v1/query.pb.h"

namespace tracehealth::server {

// Fills `*w` from the flags given. False, with the reason on `err`, for a
// --preempt that names no mode.
bool WhatIfFromFlags(v1::WhatIf* w, std::ostream& err);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_TOOLS_TRACEHEALTHCTL_WHAT_IF_FLAGS_H_
