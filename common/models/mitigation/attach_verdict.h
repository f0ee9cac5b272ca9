// Whether one attach fits a latency budget on a host (docs/design.md §9.1):
// the verdict and a one-line reason, from the attach model's prediction.
//
//   risk UNKNOWN                       -> UNKNOWN
//   risk STALL or WARNING              -> STALL_RISK (whatever the budget)
//   latency_seconds > budget           -> OVER_BUDGET
//   otherwise                          -> SAFE
//
// An attach the kernel refuses (a second fgraph user before 6.11: -EBUSY)
// or a probe kind the kernel lacks runs nothing and is SAFE; its reason says
// that it will fail. A new fgraph user on an already-active fgraph from 6.11
// costs one pass over the task list (init_task_vars()), judged like any
// other latency.
//
// When the kind uses fgraph and the snapshot cannot tell whether fgraph is
// already active, the model assumes it is not (a walk). If the same attach
// would be safe were fgraph active (one pass, or refused), the answer
// depends on the missing input and the verdict is UNKNOWN; if it is unsafe
// either way, it stays unsafe.
//
// Pure functions of a snapshot and options, for the host gate
// (agent/gate) and for fleet plans over stored snapshots alike.
//
// Thread safety: pure functions.
#ifndef TRACEHEALTH_COMMON_MODELS_MITIGATION_ATTACH_VERDICT_H_
#define TRACEHEALTH_COMMON_MODELS_MITIGATION_ATTACH_VERDICT_H_

#include <string>

#include "common/models/model_options.h"
#include "proto/tracehealth/v1/mitigation.pb.h"
#include "proto/tracehealth/v1/predictions.pb.h"
#include "proto/tracehealth/v1/snapshot.pb.h"

namespace tracehealth {

// The verdict of a prediction against `budget_seconds` (the table above,
// without the fgraph-activity rule).
v1::AttachVerdict VerdictOf(const v1::AttachPrediction& p,
                            double budget_seconds);

// "safe", "unsafe" (OVER_BUDGET and STALL_RISK), "unknown".
const char* VerdictWord(v1::AttachVerdict verdict);

struct AttachAssessment {
  v1::AttachVerdict verdict = v1::ATTACH_VERDICT_UNKNOWN;
  // The prediction (numbers only; the caller explains it if it shows it),
  // with `budget_seconds` as its latency budget.
  v1::AttachPrediction prediction;
  // "unsafe: function_graph tracer attach walks 240000 threads: 79.86 s >
  // 2.00 s budget; soft lockup (PREEMPT_NONE, 3.99x the 20.00 s threshold)".
  std::string reason;
};

// Predicts `kind` on `snapshot` with `options` and the budget as its
// latency budget, and judges it. `budget_seconds` must be > 0.
AttachAssessment AssessAttach(const v1::HostSnapshot& snapshot,
                              v1::ProbeKind kind, double budget_seconds,
                              const ModelOptions& options);

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_MODELS_MITIGATION_ATTACH_VERDICT_H_
