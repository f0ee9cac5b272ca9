// Names for people of the tracehealth.v1 enums that reports, summaries,
// tables and command-line flags show: one table per enum, so every binary
// spells a value the same way.
//
// Thread safety: pure functions over constant tables.
#ifndef TRACEHEALTH_COMMON_ENUM_NAMES_H_
#define TRACEHEALTH_COMMON_ENUM_NAMES_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "proto/tracehealth/v1/predictions.pb.h"
#include "proto/tracehealth/v1/snapshot.pb.h"

namespace tracehealth {

// "unknown", "none", "latency", "warning", "stall".
const char* RiskName(v1::Risk risk);

// The kernel's short name, as /sys/kernel/debug/sched/preempt and the
// preempt= boot parameter spell it: "none", "voluntary", "full", "lazy",
// "rt"; "unknown" otherwise.
const char* PreemptModeName(v1::PreemptMode mode);
// The configuration's name: "PREEMPT_NONE", "PREEMPT_VOLUNTARY", "PREEMPT",
// "PREEMPT_LAZY", "PREEMPT_RT"; "preemption unknown" otherwise.
const char* PreemptModeConfigName(v1::PreemptMode mode);
// The mode PreemptModeName() names ("none" .. "rt", lower case); nullopt for
// any other text.
std::optional<v1::PreemptMode> PreemptModeFromName(absl::string_view name);

// "soft lockup", "RCU stall", "latency budget", "pool budget", "hung
// task"; "unspecified" otherwise.
const char* CheckKindName(v1::ThresholdCheck::Kind kind);
// The same as an adjective: "soft-lockup", "RCU-stall", "latency-budget",
// "pool-budget", "hung-task"; "threshold" otherwise ("crosses the
// soft-lockup threshold").
const char* CheckKindAdjective(v1::ThresholdCheck::Kind kind);

// "unknown", "off", "none", "reported", "panic"; "unspecified" otherwise.
const char* HungTaskRiskName(v1::HungTaskRisk risk);

// "the fitted class", "another CPU", "a guest", "an emulated CPU", "an
// unknown CPU" (CPU_CLASS_UNSPECIFIED too).
const char* CpuClassName(v1::CpuClass cls);

// What a prediction's basis says of an input's source: "measured",
// "derived", "default", "given" (an override); "?" otherwise.
const char* InputSourceName(v1::InputSource source);

// Who uses fgraph on a host: "function_graph tracer", "BPF kprobe_multi
// link", ...; "unknown user" otherwise.
const char* FgraphUserName(v1::FgraphUser::Kind kind);

// Probe kinds, PROBE_KIND_FUNCTION_GRAPH_TRACER .. PROBE_KIND_FENTRY_FEXIT.
// The name summaries use: "function_graph tracer", "kprobe_multi return",
// ...; "unspecified probe" otherwise.
const char* ProbeKindName(v1::ProbeKind kind);
// What a user attaches, for tables: "irqsoff/wakeup + display-graph",
// "BPF kprobe_multi (return)", ...; "?" otherwise.
const char* ProbeKindLabel(v1::ProbeKind kind);
// The command-line name: "function_graph", "kprobe_multi_return", "fentry",
// ...; "" otherwise.
const char* ProbeKindFlag(v1::ProbeKind kind);
// The kind whose ProbeKindFlag() is `flag`; nullopt for any other text.
std::optional<v1::ProbeKind> ProbeKindFromFlag(absl::string_view flag);
// Every command-line name, in ProbeKind order.
std::vector<std::string> ProbeKindFlags();

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_ENUM_NAMES_H_
