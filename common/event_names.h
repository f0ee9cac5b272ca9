// Names of the observed-event enums (report.proto ObservedEvent) for
// people and for metric labels, and a one-line description of an event:
// one table per enum, so the agent's report, tracehealthctl, the web page
// and /metrics spell a value the same way.
//
// Thread safety: pure functions over constant tables.
#ifndef TRACEHEALTH_COMMON_EVENT_NAMES_H_
#define TRACEHEALTH_COMMON_EVENT_NAMES_H_

#include <string>

#include "proto/tracehealth/v1/report.pb.h"

namespace tracehealth {

// "soft lockup", "RCU stall", "hung task"; "unspecified event" otherwise.
const char* EventKindName(v1::ObservedEventKind kind);
// The metric label: "soft_lockup", "rcu_stall", "hung_task";
// "unspecified" otherwise.
const char* EventKindLabel(v1::ObservedEventKind kind);

// "fgraph attach", "vmap purge", "stack depot"; "unattributed" otherwise.
const char* EventModelName(v1::EventModel model);
// The metric label: "fgraph", "vmap", "depot"; "none" otherwise.
const char* EventModelLabel(v1::EventModel model);

// "rcu_sched", "rcu_preempt", "other RCU"; "" otherwise.
const char* RcuFlavorName(v1::RcuFlavor flavor);

// What happened, to whom, on one line: "soft lockup, CPU#5 stuck 22 s,
// bpftrace[4242]", "RCU stall (rcu_sched, self-detected), CPU 0, t=21000
// jiffies, bpftrace[160141]", "hung task, blocked 120 s, jbd2/sda1-8[912]".
// The comm is as the event holds it (printable ASCII).
std::string DescribeEvent(const v1::ObservedEvent& event);

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_EVENT_NAMES_H_
