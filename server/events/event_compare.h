// How an observed kernel event compares with a prediction (query.proto
// EventPrediction; docs/design.md §12.3).
//
// The prediction is the `predictions` of the host's report current when the
// event was logged. An fgraph-attributed event takes the worst risk over
// the attach predictions of its probe kinds (all kinds that use fgraph
// when the backtrace did not say which); a vmap-purge one the purge's risk.
// RISK_WARNING or RISK_STALL is predicted (yes); so is, for a hung task,
// a predicted latency at least the seconds the task was blocked. RISK_NONE
// or RISK_LATENCY otherwise is a miss (no). Unknown: no report, an
// unattributed or stack-depot event (the depot model predicts pool
// exhaustion, not stalls), no prediction for the event's probe kinds, a
// purge model that does not apply to the host, or RISK_UNKNOWN.
//
// Thread safety: pure function.
#ifndef TRACEHEALTH_SERVER_EVENTS_EVENT_COMPARE_H_
#define TRACEHEALTH_SERVER_EVENTS_EVENT_COMPARE_H_

#include "proto/tracehealth/v1/query.pb.h"
#include "proto/tracehealth/v1/report.pb.h"

namespace tracehealth::server {

struct EventComparison {
  v1::EventPrediction predicted = v1::EVENT_PREDICTION_UNKNOWN;
  // The risk the prediction said for the event's model (RISK_UNKNOWN when
  // there was none to compare with).
  v1::Risk risk = v1::RISK_UNKNOWN;
};

// `prediction` null: no report to compare with.
EventComparison CompareEvent(const v1::ObservedEvent& event,
                             const v1::HostReport* prediction);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_EVENTS_EVENT_COMPARE_H_
