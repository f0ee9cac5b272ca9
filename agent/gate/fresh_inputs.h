// The inputs of the attach model that move between collection cycles, read
// again for one gate check over the last cycle's snapshot:
//
//   threads.total, threads.running    /proc/loadavg
//   threads.forks_since_boot          /proc/stat "processes"
//   threads.uptime_seconds            /proc/uptime
//   fgraph users from tracefs         tracers, profiler, fprobe events
//                                     (agent/collect/tracefs_users.h) at
//                                     the snapshot's tracefs path
//   fgraph.active, N_null bound       from the above, the snapshot's BPF
//                                     kprobe_multi users (the fdinfo scan is
//                                     too costly for a check) and its record
//                                     of when fgraph was last active
//                                     (agent/state/fgraph_memory.h)
//
// Everything else (release, config, preemption, thresholds, function
// counts, links) is the snapshot's. Unknown inputs of the refreshed fields
// are replaced by this read's. Nothing is written: the record of the last
// active moment is the collector's to keep.
//
// Cost: four small files plus tracefs's (two per instance); nothing walks
// processes or threads.
//
// Thread safety: a pure function of the files under `fs` and its arguments.
#ifndef TRACEHEALTH_AGENT_GATE_FRESH_INPUTS_H_
#define TRACEHEALTH_AGENT_GATE_FRESH_INPUTS_H_

#include "common/kernel/feature_table.h"
#include "common/procfs/host_fs.h"
#include "proto/tracehealth/v1/snapshot.pb.h"

namespace tracehealth::agent {

// `last` with the moving inputs read again through `fs`.
v1::HostSnapshot RefreshMovingInputs(const HostFs& fs,
                                     const FeatureTable& features,
                                     const v1::HostSnapshot& last);

}  // namespace tracehealth::agent

#endif  // TRACEHEALTH_AGENT_GATE_FRESH_INPUTS_H_
