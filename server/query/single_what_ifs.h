// For tests: every what-if input a PredictAttach request can override, each
// with the basis input name it must mark OVERRIDDEN and a setter that
// overrides only it (what_if_test and plan_query_test check the host-by-host
// and the fleet-wide paths against the same list).
#ifndef TRACEHEALTH_SERVER_QUERY_SINGLE_WHAT_IFS_H_
#define TRACEHEALTH_SERVER_QUERY_SINGLE_WHAT_IFS_H_

#include "proto/tracehealth/v1/query.pb.h"

namespace tracehealth::server {

struct SingleWhatIf {
  const char* input;
  void (*set)(v1::WhatIf&);
};

inline constexpr SingleWhatIf kSingleWhatIfs[] = {
    {"threads.total", [](v1::WhatIf& w) { w.set_threads(400000); }},
    {"fgraph.null_threads_bound", [](v1::WhatIf& w) { w.set_null_threads(5); }},
    {"kernel.preempt_mode",
     [](v1::WhatIf& w) { w.set_preempt_mode(v1::PREEMPT_MODE_FULL); }},
    {"kernel.release", [](v1::WhatIf& w) { w.set_kernel_release("6.19.1"); }},
    {"fgraph.active", [](v1::WhatIf& w) { w.set_fgraph_active(false); }},
    {"batch", [](v1::WhatIf& w) { w.set_batch(1024); }},
};

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_QUERY_SINGLE_WHAT_IFS_H_
