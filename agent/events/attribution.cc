#include "agent/events/attribution.h"

#include <algorithm>

#include "absl/strings/match.h"

namespace tracehealth::agent {
namespace {

// The fgraph walk and its entry points (kernel/trace/fgraph.c,
// kernel/trace/fprobe.c, kernel/trace/bpf_trace.c).
constexpr absl::string_view kFgraphSymbols[] = {
    "alloc_retstack_tasklist",
    "start_graph_tracing",
    "register_ftrace_graph",
    "bpf_kprobe_multi_link_attach",
};
// The lazy purge (mm/vmalloc.c).
constexpr absl::string_view kVmapSymbols[] = {
    "purge_vmap_area_lazy",
    "__purge_vmap_area_lazy",
    "purge_vmap_node",
    "drain_vmap_area_work",
};
// lib/stackdepot.c.
constexpr absl::string_view kDepotSymbols[] = {
    "__stack_depot_save",
    "depot_alloc_stack",
};

bool In(absl::string_view s, absl::Span<const absl::string_view> set) {
  return std::find(set.begin(), set.end(), s) != set.end();
}

// fprobe's code that runs on every probe hit, not at attach.
bool IsProbeHandler(absl::string_view s) {
  for (absl::string_view word : {"handler", "entry", "return", "exit"}) {
    if (absl::StrContains(s, word)) return true;
  }
  return false;
}

// The probe kinds a caller on the stack attaches (attribution.h).
void AddCallerKinds(absl::string_view s, std::vector<v1::ProbeKind>* kinds) {
  auto add = [kinds](std::initializer_list<v1::ProbeKind> ks) {
    kinds->insert(kinds->end(), ks);
  };
  if (s == "bpf_kprobe_multi_link_attach") {
    add({v1::PROBE_KIND_KPROBE_MULTI, v1::PROBE_KIND_KPROBE_MULTI_RETURN,
         v1::PROBE_KIND_KPROBE_SESSION});
  } else if (absl::StartsWith(s, "trace_fprobe_") ||
             s == "__register_trace_fprobe" || s == "enable_trace_fprobe") {
    add({v1::PROBE_KIND_FPROBE_EVENT, v1::PROBE_KIND_FPROBE_RETURN_EVENT});
  } else if (s == "graph_trace_init") {
    add({v1::PROBE_KIND_FUNCTION_GRAPH_TRACER});
  } else if (s == "ftrace_profile_write" || s == "register_ftrace_profiler") {
    add({v1::PROBE_KIND_FUNCTION_PROFILER});
  } else if (s == "register_irqsoff_function" ||
             s == "register_wakeup_function" || s == "start_irqsoff_tracer" ||
             s == "irqsoff_display_graph" || s == "wakeup_display_graph") {
    add({v1::PROBE_KIND_GRAPH_LATENCY_TRACER});
  }
}

int Priority(v1::EventModel m) {
  switch (m) {
    case v1::EVENT_MODEL_FGRAPH_ATTACH:
      return 3;
    case v1::EVENT_MODEL_VMAP_PURGE:
      return 2;
    case v1::EVENT_MODEL_STACK_DEPOT:
      return 1;
    default:
      return 0;
  }
}

}  // namespace

v1::EventModel ModelOfSymbol(absl::string_view s) {
  if (In(s, kFgraphSymbols) || absl::StartsWith(s, "register_fprobe") ||
      (absl::StartsWith(s, "fprobe_") && !IsProbeHandler(s))) {
    return v1::EVENT_MODEL_FGRAPH_ATTACH;
  }
  if (In(s, kVmapSymbols) || absl::StartsWith(s, "kasan_release_vmalloc")) {
    return v1::EVENT_MODEL_VMAP_PURGE;
  }
  if (In(s, kDepotSymbols) || absl::StartsWith(s, "stack_depot_save")) {
    return v1::EVENT_MODEL_STACK_DEPOT;
  }
  return v1::EVENT_MODEL_UNATTRIBUTED;
}

Attribution Attribute(absl::Span<const std::string> symbols) {
  Attribution a;
  bool fprobe = false;
  // Innermost first: the last match of the winning model is its outermost.
  for (const std::string& s : symbols) {
    const v1::EventModel m = ModelOfSymbol(s);
    if (m == v1::EVENT_MODEL_UNATTRIBUTED) continue;
    if (Priority(m) >= Priority(a.model)) {
      a.model = m;
      a.symbol = s;
    }
    fprobe = fprobe || absl::StartsWith(s, "register_fprobe");
  }
  if (a.model != v1::EVENT_MODEL_FGRAPH_ATTACH) return a;
  for (const std::string& s : symbols) AddCallerKinds(s, &a.probe_kinds);
  if (a.probe_kinds.empty() && fprobe) {
    a.probe_kinds = {v1::PROBE_KIND_KPROBE_MULTI,
                     v1::PROBE_KIND_KPROBE_MULTI_RETURN,
                     v1::PROBE_KIND_KPROBE_SESSION, v1::PROBE_KIND_FPROBE_EVENT,
                     v1::PROBE_KIND_FPROBE_RETURN_EVENT};
  }
  std::sort(a.probe_kinds.begin(), a.probe_kinds.end());
  a.probe_kinds.erase(std::unique(a.probe_kinds.begin(), a.probe_kinds.end()),
                      a.probe_kinds.end());
  return a;
}

}  // namespace tracehealth::agent
