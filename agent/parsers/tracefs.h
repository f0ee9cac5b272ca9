// Parsers for tracefs files that tell who keeps fgraph active:
// current_tracer, function_profile_enabled, options/display-graph,
// dynamic_events, enabled_functions.
//
// Pure functions; errors are InvalidArgument.
#ifndef TRACEHEALTH_AGENT_PARSERS_TRACEFS_H_
#define TRACEHEALTH_AGENT_PARSERS_TRACEFS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tracehealth::agent {

// current_tracer: one tracer name and a newline ("nop", "function_graph").
// Errors: empty, or more than one word.
absl::StatusOr<std::string> ParseCurrentTracer(absl::string_view text);

// A 0/1 flag file (function_profile_enabled, options/display-graph).
absl::StatusOr<bool> ParseFlagFile(absl::string_view text);

// Whether `tracer` (with the display-graph option `display_graph`) uses
// fgraph: function_graph always; the latency tracers irqsoff, preemptoff,
// preemptirqsoff, wakeup, wakeup_rt, wakeup_dl only with display-graph.
bool TracerUsesFgraph(absl::string_view tracer, bool display_graph);

// One line of dynamic_events:
//   "f:fprobes/vfs_read_entry vfs_read"
//   "f:fprobes/vfs_read_exit vfs_read%return $retval"
//   "p:kprobes/p_do_sys_open do_sys_open", "t:tracepoints/...", "e:..."
struct DynamicEvent {
  char type = 0;     // 'f', 'p', 'r', 't', 'e', 'u', ...
  std::string name;  // "fprobes/vfs_read_exit"
  std::string target;
  bool is_return = false;  // fprobe on %return (or an 'r' kretprobe)
};
// Every non-empty line must be "<type>[maxactive]:<group/name> <target>...".
absl::StatusOr<std::vector<DynamicEvent>> ParseDynamicEvents(
    absl::string_view text);

// Whether a line of enabled_functions or available_filter_functions counts
// as a function: it holds more than blanks.
bool IsFunctionLine(absl::string_view line);

// Whether a line of set_ftrace_filter names a filtered function: not the
// "#### all functions enabled ####" an empty filter prints, not a comment,
// and not a function command ("schedule:traceon:unlimited", which the file
// lists too but which filters nothing).
bool IsFtraceFilterEntry(absl::string_view line);

}  // namespace tracehealth::agent

#endif  // TRACEHEALTH_AGENT_PARSERS_TRACEFS_H_
