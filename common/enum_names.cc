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

}  // namespace

const char* RiskName(v1::Risk risk) {
  const RiskRow* row = Find(kRisks, risk);
  return row != nullptr ? row->name : "unknown";
}

const char* PreemptModeName(v1::PreemptMode mode) {
  const PreemptRow* row = Find(kPreemptModes, mode);
  return row != nullptr ? row->name : "unknown";
}

const char* PreemptModeConfigName(v1::PreemptMode mode) {
  const PreemptRow* row = Find(kPreemptModes, mode);
  return row != nullptr ? row->config_name : "preemption unknown";
}

std::optional<v1::PreemptMode> PreemptModeFromName(absl::string_view name) {
  for (const PreemptRow& row : kPreemptModes) {
    if (name == row.name) return row.value;
  }
  return std::nullopt;
}

const char* CheckKindName(v1::ThresholdCheck::Kind kind) {
  const CheckRow* row = Find(kChecks, kind);
  return row != nullptr ? row->name : "unspecified";
}

const char* CheckKindAdjective(v1::ThresholdCheck::Kind kind) {
  const CheckRow* row = Find(kChecks, kind);
  return row != nullptr ? row->adjective : "threshold";
}

const char* InputSourceName(v1::InputSource source) {
  const SourceRow* row = Find(kSources, source);
  return row != nullptr ? row->name : "?";
}

const char* ProbeKindName(v1::ProbeKind kind) {
  const ProbeRow* row = Find(kProbeKinds, kind);
  return row != nullptr ? row->name : "unspecified probe";
}

const char* ProbeKindLabel(v1::ProbeKind kind) {
  const ProbeRow* row = Find(kProbeKinds, kind);
  return row != nullptr ? row->label : "?";
}

const char* ProbeKindFlag(v1::ProbeKind kind) {
  const ProbeRow* row = Find(kProbeKinds, kind);
  return row != nullptr ? row->flag : "";
}

std::optional<v1::ProbeKind> ProbeKindFromFlag(absl::string_view flag) {
  for (const ProbeRow& row : kProbeKinds) {
    if (flag == row.flag) return row.value;
  }
  return std::nullopt;
}

std::vector<std::string> ProbeKindFlags() {
  std::vector<std::string> flags;
  for (const ProbeRow& row : kProbeKinds) flags.push_back(row.flag);
  return flags;
}

}  // namespace tracehealth
