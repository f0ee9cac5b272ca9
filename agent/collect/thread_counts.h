// The thread counts of a host at one moment: threads.total and
// threads.running (/proc/loadavg), threads.forks_since_boot (/proc/stat
// "processes") and threads.uptime_seconds (/proc/uptime). Read by the
// collector's cycle and by the gate's read between cycles (agent/gate).
// Three small files; nothing walks threads.
//
// Thread safety: a pure function of the files under `fs`.
#ifndef TRACEHEALTH_AGENT_COLLECT_THREAD_COUNTS_H_
#define TRACEHEALTH_AGENT_COLLECT_THREAD_COUNTS_H_

#include <string>

#include "absl/status/statusor.h"
#include "agent/collect/unknown_input.h"
#include "common/procfs/host_fs.h"
#include "proto/tracehealth/v1/snapshot.pb.h"

namespace tracehealth::agent {

// Fills `t` (cleared first) and names in `unknown` each count that could
// not be read, with the reason. Returns the /proc/stat text (the collector
// reads btime from it too), or why it could not be read.
absl::StatusOr<std::string> ReadThreadCounts(const HostFs& fs,
                                             v1::ThreadCounts* t,
                                             UnknownInputs* unknown);

}  // namespace tracehealth::agent

#endif  // TRACEHEALTH_AGENT_COLLECT_THREAD_COUNTS_H_
