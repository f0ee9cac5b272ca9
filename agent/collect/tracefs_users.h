// The fgraph users tracefs shows: the tracer of the top level and of every
// instance (function_graph, or a latency tracer with display-graph), the
// function profiler, and fprobe events in dynamic_events. Shared by the
// collector's cycle (FgraphCollector) and the gate's fresh read between
// cycles (agent/gate), which both need "who keeps fgraph active right now".
//
// Cost: a fixed set of small files plus two per tracefs instance; nothing
// here walks processes or threads.
//
// Thread safety: pure functions of the files under `fs` (HostFs is safe to
// use concurrently).
#ifndef TRACEHEALTH_AGENT_COLLECT_TRACEFS_USERS_H_
#define TRACEHEALTH_AGENT_COLLECT_TRACEFS_USERS_H_

#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "agent/collect/unknown_input.h"
#include "common/kernel/feature_table.h"
#include "common/kernel/release.h"
#include "common/procfs/host_fs.h"
#include "proto/tracehealth/v1/snapshot.pb.h"

namespace tracehealth::agent {

// Which fprobe users (fprobe events, BPF kprobe_multi links) register an
// fgraph user on a kernel: feature rows fprobe_on_fgraph and
// fprobe_entry_only_off_fgraph.
struct FprobeFgraphRule {
  bool on_fgraph = true;        // fprobe is built on fgraph
  bool entry_only_off = false;  // entry-only fprobes no longer register it
  // Whether an fprobe user with an exit handler (`is_return`; nullopt: not
  // known) registers fgraph.
  bool Registers(std::optional<bool> is_return) const;
};

// The rule for `release` on architecture `arch` (uname -m or the kernel's
// name; "" when unknown: the rows' general releases), as the attach model
// reads the same rows: the entry-only backport reaches arm64 later than
// x86-64. An unknown release (nullopt) assumes every fprobe user registers
// fgraph (the worst case).
FprobeFgraphRule FprobeFgraphRuleFor(
    const FeatureTable& features, const std::optional<KernelRelease>& release,
    absl::string_view arch);

// Appends to `fgraph->users` the users tracefs mounted at `tracefs` shows,
// and to `unknown` each source that could not be read (named as in the
// snapshot: "fgraph.current_tracer", "fgraph.instances.NAME.current_tracer",
// "fgraph.instances", "fgraph.function_profile_enabled",
// "fgraph.dynamic_events"). Files a kernel may lack (instances/,
// function_profile_enabled, dynamic_events) are not an error. Returns true
// when every source could be read.
bool ReadTracefsUsers(const HostFs& fs, const std::string& tracefs,
                      const FprobeFgraphRule& rule, v1::FgraphState* fgraph,
                      UnknownInputs* unknown);

// fgraph.active from `fgraph->users`: true with any user, false when
// `all_known` (every source of users could be read), else unset and named in
// `unknown`.
void SetActiveFromUsers(bool all_known, v1::FgraphState* fgraph,
                        UnknownInputs* unknown);

}  // namespace tracehealth::agent

#endif  // TRACEHEALTH_AGENT_COLLECT_TRACEFS_USERS_H_
