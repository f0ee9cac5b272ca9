// Attribution of a kernel stall to a model by the functions in its
// backtrace (docs/design.md §12.2).
//
//   fgraph attach  alloc_retstack_tasklist, start_graph_tracing,
//                  register_ftrace_graph, bpf_kprobe_multi_link_attach,
//                  register_fprobe*, fprobe_* (not the probe handlers that
//                  run on every hit: *_handler, *entry*, *return*, *exit*)
//   vmap purge     kasan_release_vmalloc*, purge_vmap_area_lazy,
//                  __purge_vmap_area_lazy, purge_vmap_node,
//                  drain_vmap_area_work
//   stack depot    stack_depot_save*, __stack_depot_save, depot_alloc_stack
//
// When frames of several models are on one stack, fgraph wins over the
// purge and both over the stack depot: the walk and the purge are the long
// loops, and KASAN calls the stack depot from inside both (every
// allocation's stack is saved).
//
// For fgraph the callers on the stack also say which probe kinds were
// being attached:
//   bpf_kprobe_multi_link_attach            kprobe_multi, kprobe_multi_return,
//                                           kprobe_session
//   trace_fprobe_*, __register_trace_fprobe,
//   enable_trace_fprobe                     fprobe_event, fprobe_return_event
//   register_fprobe* (no caller above)      the five fprobe kinds
//   graph_trace_init                        function_graph_tracer
//   ftrace_profile_write,
//   register_ftrace_profiler                function_profiler
//   irqsoff_*/wakeup_* tracer functions     graph_latency_tracer
// and none (any kind that uses fgraph) when the stack shows only the walk.
//
// Thread safety: pure functions.
#ifndef TRACEHEALTH_AGENT_EVENTS_ATTRIBUTION_H_
#define TRACEHEALTH_AGENT_EVENTS_ATTRIBUTION_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "proto/tracehealth/v1/predictions.pb.h"
#include "proto/tracehealth/v1/report.pb.h"

namespace tracehealth::agent {

struct Attribution {
  v1::EventModel model = v1::EVENT_MODEL_UNATTRIBUTED;
  // The symbol it rests on (the outermost frame of the winning model).
  std::string symbol;
  // fgraph only: the probe kinds, in ProbeKind order; empty: any.
  std::vector<v1::ProbeKind> probe_kinds;
};

// `symbols`: the function names of a backtrace's reliable frames, innermost
// first.
Attribution Attribute(absl::Span<const std::string> symbols);

// The model a single function belongs to (UNATTRIBUTED: none).
v1::EventModel ModelOfSymbol(absl::string_view symbol);

}  // namespace tracehealth::agent

#endif  // TRACEHEALTH_AGENT_EVENTS_ATTRIBUTION_H_
