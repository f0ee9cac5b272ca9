// One gate check, whichever path answers it (the agent's socket or
// tracehealthctl in-process): the request's validation, the call sites it
// names, the verdict with its reason (common/models/mitigation), the
// explained prediction and the mitigations.
//
// Thread safety: ValidateCheckRequest and EvaluateCheck are safe to call
// concurrently (FunctionCache is thread-safe).
#ifndef TRACEHEALTH_AGENT_GATE_GATE_CHECK_H_
#define TRACEHEALTH_AGENT_GATE_GATE_CHECK_H_

#include <optional>

#include "absl/status/status.h"
#include "agent/gate/function_list.h"
#include "common/models/model_options.h"
#include "proto/tracehealth/v1/gate.pb.h"
#include "proto/tracehealth/v1/snapshot.pb.h"

namespace tracehealth::agent {

// The longest max_latency accepted.
inline constexpr double kMaxLatencyLimitSeconds = 3600;

// InvalidArgument naming the field ("probe_kind: ...", "functions: ...",
// "filter: ...", "max_latency: ...") for a request the gate cannot answer.
absl::Status ValidateCheckRequest(const v1::CheckRequest& request);

// The answer to a valid `request` on `snapshot` (the fresh one). The
// filter, if any, is counted through `functions` in the snapshot's tracefs;
// when it cannot be counted, or selects nothing, the verdict is UNKNOWN.
// `trend` feeds the timing mitigation. Fills everything but answered_by,
// read_at and snapshot_at, which are the caller's.
v1::CheckResponse EvaluateCheck(const v1::CheckRequest& request,
                                const v1::HostSnapshot& snapshot,
                                const ModelOptions& options,
                                FunctionCache& functions,
                                const std::optional<v1::ThreadTrend>& trend);

}  // namespace tracehealth::agent

#endif  // TRACEHEALTH_AGENT_GATE_GATE_CHECK_H_
