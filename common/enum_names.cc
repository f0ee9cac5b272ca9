#include "common/enum_names.h"

namespace tracehealth {
namespace {

// Looks `value` up in a table of {value, name...} rows; nullptr when absent.
template <typename Row, size_t N, typename Value>
const Row* Find(const Row (&rows)[N], Value value) {
  for (const Row& row : rows) {
    if (row.value == value) return &row;
  }
  return nullptr;
}

struct RiskRow {
  v1::Risk value;
  const char* name;
};
constexpr RiskRow kRisks[] = {
    {v1::RISK_NONE, "none"},
    {v1::RISK_LATENCY, "latency"},
    {v1::RISK_WARNING, "warning"},
    {v1::RISK_STALL, "stall"},
};

struct PreemptRow {
  v1::PreemptMode value;
  const char* name;
  const char* config_name;
};
constexpr PreemptRow kPreemptModes[] = {
    {v1::PREEMPT_MODE_NONE, "none", "PREEMPT_NONE"},
    {v1::PREEMPT_MODE_VOLUNTARY, "voluntary", "PREEMPT_VOLUNTARY"},
    {v1::PREEMPT_MODE_FULL, "full", "PREEMPT"},
    {v1::PREEMPT_MODE_LAZY, "lazy", "PREEMPT_LAZY"},
    {v1::PREEMPT_MODE_RT, "rt", "PREEMPT_RT"},
};

struct CheckRow {
  v1::ThresholdCheck::Kind value;
  const char* name;
  const char* adjective;
};
constexpr CheckRow kChecks[] = {
    {v1::ThresholdCheck::KIND_SOFT_LOCKUP, "soft lockup", "soft-lockup"},
    {v1::ThresholdCheck::KIND_RCU_STALL, "RCU stall", "RCU-stall"},
    {v1::ThresholdCheck::KIND_LATENCY, "latency budget", "latency-budget"},
    {v1::ThresholdCheck::KIND_POOL_BUDGET, "pool budget", "pool-budget"},
    {v1::ThresholdCheck::KIND_HUNG_TASK, "hung task", "hung-task"},
};

struct HungTaskRow {
  v1::HungTaskRisk value;
  const char* name;
};
constexpr HungTaskRow kHungTasks[] = {
    {v1::HUNG_TASK_RISK_UNKNOWN, "unknown"},
    {v1::HUNG_TASK_RISK_OFF, "off"},
    {v1::HUNG_TASK_RISK_NONE, "none"},
    {v1::HUNG_TASK_RISK_REPORTED, "reported"},
    {v1::HUNG_TASK_RISK_PANIC, "panic"},
};

struct CpuClassRow {
  v1::CpuClass value;
  const char* name;
};
constexpr CpuClassRow kCpuClasses[] = {
    {v1::CPU_CLASS_FITTED, "the fitted class"},
    {v1::CPU_CLASS_OTHER, "another CPU"},
    {v1::CPU_CLASS_VIRTUALIZED, "a guest"},
    {v1::CPU_CLASS_EMULATED, "an emulated CPU"},
    {v1::CPU_CLASS_UNKNOWN, "an unknown CPU"},
};

struct SourceRow {
  v1::InputSource value;
  const char* name;
};
constexpr SourceRow kSources[] = {
    {v1::INPUT_SOURCE_MEASURED, "measured"},
    {v1::INPUT_SOURCE_DERIVED, "derived"},
    {v1::INPUT_SOURCE_DEFAULT, "default"},
    {v1::INPUT_SOURCE_OVERRIDDEN, "given"},
    {v1::INPUT_SOURCE_NOT_APPLICABLE, "not applicable"},
};

struct UserRow {
  v1::FgraphUser::Kind value;
  const char* name;
};
constexpr UserRow kFgraphUsers[] = {
    {v1::FgraphUser::KIND_FUNCTION_GRAPH_TRACER, "function_graph tracer"},
    {v1::FgraphUser::KIND_FUNCTION_PROFILER, "function profiler"},
    {v1::FgraphUser::KIND_GRAPH_LATENCY_TRACER,
     "latency tracer with display-graph"},
    {v1::FgraphUser::KIND_FPROBE_EVENT, "fprobe event"},
    {v1::FgraphUser::KIND_FPROBE_RETURN_EVENT, "fprobe %return event"},
    {v1::FgraphUser::KIND_BPF_KPROBE_MULTI, "BPF kprobe_multi link"},
    {v1::FgraphUser::KIND_BPF_KPROBE_MULTI_RETURN,
     "BPF kprobe_multi return link"},
};

struct ProbeRow {
  v1::ProbeKind value;
  const char* flag;
  const char* name;
  const char* label;
};
constexpr ProbeRow kProbeKinds[] = {
    {v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, "function_graph",
     "function_graph tracer", "function_graph tracer"},
    {v1::PROBE_KIND_FUNCTION_PROFILER, "function_profiler", "function profiler",
     "function profiler"},
    {v1::PROBE_KIND_GRAPH_LATENCY_TRACER, "graph_latency",
     "graph latency tracer", "irqsoff/wakeup + display-graph"},
    {v1::PROBE_KIND_KPROBE_MULTI, "kprobe_multi", "kprobe_multi",
     "BPF kprobe_multi (entry)"},
    {v1::PROBE_KIND_KPROBE_MULTI_RETURN, "kprobe_multi_return",
     "kprobe_multi return", "BPF kprobe_multi (return)"},
    {v1::PROBE_KIND_KPROBE_SESSION, "kprobe_session", "kprobe session",
     "BPF kprobe session"},
    {v1::PROBE_KIND_FPROBE_EVENT, "fprobe", "fprobe event", "fprobe event"},
    {v1::PROBE_KIND_FPROBE_RETURN_EVENT, "fprobe_return",
     "fprobe %return event", "fprobe event %return"},
    {v1::PROBE_KIND_KRETPROBE, "kretprobe", "kretprobe", "kretprobe"},
    {v1::PROBE_KIND_FENTRY_FEXIT, "fentry", "fentry/fexit", "BPF fentry/fexit"},
};

// The `field` of `value`'s row, or `otherwise`.
template <typename Row, size_t N, typename Value>
const char* Column(const Row (&rows)[N], Value value, const char* Row::*field,
                   const char* otherwise) {
  const Row* row = Find(rows, value);
  return row != nullptr ? row->*field : otherwise;
}

// The value whose `field` is `text`.
template <typename Row, size_t N>
auto ValueOf(const Row (&rows)[N], const char* Row::*field,
             absl::string_view text) -> std::optional<decltype(rows[0].value)> {
  for (const Row& row : rows) {
    if (text == row.*field) return row.value;
  }
  return std::nullopt;
}

}  // namespace

const char* RiskName(v1::Risk risk) {
  return Column(kRisks, risk, &RiskRow::name, "unknown");
}

const char* PreemptModeName(v1::PreemptMode mode) {
  return Column(kPreemptModes, mode, &PreemptRow::name, "unknown");
}

const char* PreemptModeConfigName(v1::PreemptMode mode) {
  return Column(kPreemptModes, mode, &PreemptRow::config_name,
                "preemption unknown");
}

std::optional<v1::PreemptMode> PreemptModeFromName(absl::string_view name) {
  return ValueOf(kPreemptModes, &PreemptRow::name, name);
}

const char* CheckKindName(v1::ThresholdCheck::Kind kind) {
  return Column(kChecks, kind, &CheckRow::name, "unspecified");
}

const char* CheckKindAdjective(v1::ThresholdCheck::Kind kind) {
  return Column(kChecks, kind, &CheckRow::adjective, "threshold");
}

const char* HungTaskRiskName(v1::HungTaskRisk risk) {
  return Column(kHungTasks, risk, &HungTaskRow::name, "unspecified");
}

const char* CpuClassName(v1::CpuClass cls) {
  return Column(kCpuClasses, cls, &CpuClassRow::name, "an unknown CPU");
}

const char* InputSourceName(v1::InputSource source) {
  return Column(kSources, source, &SourceRow::name, "?");
}

const char* FgraphUserName(v1::FgraphUser::Kind kind) {
  return Column(kFgraphUsers, kind, &UserRow::name, "unknown user");
}

const char* ProbeKindName(v1::ProbeKind kind) {
  return Column(kProbeKinds, kind, &ProbeRow::name, "unspecified probe");
}

const char* ProbeKindLabel(v1::ProbeKind kind) {
  return Column(kProbeKinds, kind, &ProbeRow::label, "?");
}

const char* ProbeKindFlag(v1::ProbeKind kind) {
  return Column(kProbeKinds, kind, &ProbeRow::flag, "");
}

std::optional<v1::ProbeKind> ProbeKindFromFlag(absl::string_view flag) {
  return ValueOf(kProbeKinds, &ProbeRow::flag, flag);
}

std::vector<std::string> ProbeKindFlags() {
  std::vector<std::string> flags;
  for (const ProbeRow& row : kProbeKinds) flags.push_back(row.flag);
  return flags;
}

}  // namespace tracehealth
