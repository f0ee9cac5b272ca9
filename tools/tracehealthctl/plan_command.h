// `tracehealthctl plan --probe=KIND [--hosts=.. | --selector=..]
// --max_latency=2s [what-if flags] [--wave_hosts=N] [--limit=N]`: a rollout
// plan for a probe over the matched hosts (PredictAttachRequest.plan): each
// host safe / over budget / lockup risk / unknown, the counts, the waves
// (safe first, then over budget, then lockup risk after mitigation; unknown
// held back) with the first --wave_hosts hosts of each, and the worst
// --limit hosts (default 10) with their recommendation.
#ifndef TRACEHEALTH_TOOLS_TRACEHEALTHCTL_PLAN_COMMAND_H_
#define TRACEHEALTH_TOOLS_TRACEHEALTHCTL_PLAN_COMMAND_H_

#include <cstdint>
#include <ostream>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "proto/tracehealth/v1/query.pb.h"
#include "tools/tracehealthctl/model_request.h"

namespace tracehealth {

// The values of --max_latency and --wave_hosts.
struct PlanFlags {
  absl::Duration max_latency = absl::ZeroDuration();  // required, > 0
  int32_t wave_hosts = 20;
};

// Sets the plan (`plan`) and the what-if (`model`) of `req`.
// INVALID_ARGUMENT naming the flag for a missing or non-positive
// --max_latency, a negative --wave_hosts or a bad what-if (what_if_flags.h).
absl::Status PlanRequestFromFlags(const PlanFlags& plan,
                                  const ModelFlags& model,
                                  v1::PredictAttachRequest* req);

// The readable form of a response to a plan request.
void PrintPlan(const v1::PredictAttachRequest& req,
               const v1::PredictAttachResponse& resp, std::ostream& out);

// "lockup risk" for PLAN_CLASS_LOCKUP_RISK.
const char* PlanClassName(v1::PlanClass c);

}  // namespace tracehealth

#endif  // TRACEHEALTH_TOOLS_TRACEHEALTHCTL_PLAN_COMMAND_H_
