// Who keeps fgraph active on a host: tracers in every tracefs instance, the
// function profiler, fprobe events in dynamic_events, and BPF kprobe_multi
// links found in /proc/PID/fdinfo.
//
// Cost: the tracefs part reads a fixed set of files per cycle (plus two per
// tracefs instance). The fdinfo scan walks every process's fds (a readlink
// per fd, then fdinfo only for BPF links) and is expensive, so it runs at
// most once per `fdinfo_scan_interval` and examines at most
// `fdinfo_max_files` fds; between scans the last result is reused. A scan
// cut short by that bound leaves fgraph activity unknown unless a user was
// found.
// available_filter_functions and enabled_functions (tens of thousands of
// lines) are re-counted on the same slow schedule. Nothing here walks
// threads: the cost does not depend on the thread count.
//
// Thread safety: not thread-safe; one owner. `fs` and `features` are not
// owned and must outlive the collector.
#ifndef TRACEHEALTH_AGENT_COLLECT_FGRAPH_COLLECTOR_H_
#define TRACEHEALTH_AGENT_COLLECT_FGRAPH_COLLECTOR_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "agent/collect/tracefs_users.h"
#include "agent/collect/unknown_input.h"
#include "common/kernel/feature_table.h"
#include "common/kernel/release.h"
#include "common/procfs/host_fs.h"
#include "proto/tracehealth/v1/snapshot.pb.h"

namespace tracehealth::agent {

struct FgraphCollectorOptions {
  absl::Duration fdinfo_scan_interval = absl::Minutes(10);
  uint64_t fdinfo_max_files = 1000000;
  // Also the re-count interval of available_filter_functions and
  // enabled_functions.
  absl::Duration slow_interval = absl::Minutes(10);
};

class FgraphCollector {
 public:
  FgraphCollector(const HostFs* fs, const FeatureTable* features,
                  FgraphCollectorOptions options);

  // Fills `fgraph` (tracefs_path, users, active, function counts, links)
  // and appends unknown inputs to `unknown`. `tracefs` is the tracefs mount
  // point (or debugfs/tracing) from /proc/mounts; nullopt when neither is
  // mounted. `release` and `arch` (kernel.arch; "" when unknown) decide
  // which kprobe_multi / fprobe users sit on fgraph (nullopt: assume they
  // do).
  void Collect(const std::optional<std::string>& tracefs,
               const std::optional<KernelRelease>& release,
               const std::string& arch, absl::Time now, v1::FgraphState* fgraph,
               UnknownInputs* unknown);

 private:
  // available_filter_functions and enabled_functions, on the slow schedule.
  void CountFunctions(const std::string& t, absl::Time now,
                      v1::FgraphState* fgraph, UnknownInputs* unknown);
  // BPF kprobe_multi links from the fdinfo scan (on its schedule), each one
  // that registers fgraph under `rule` also as a user. Returns false when
  // the scan failed or stopped early.
  bool ReadLinks(const std::optional<KernelRelease>& release, absl::Time now,
                 const FprobeFgraphRule& rule, v1::FgraphState* fgraph,
                 UnknownInputs* unknown);
  // Scans /proc/*/fdinfo/* for kprobe_multi links. Returns false (with
  // `*error`) when /proc cannot be listed.
  bool ScanFdinfo(const std::optional<KernelRelease>& release,
                  std::vector<v1::BpfKprobeMultiLink>* links,
                  std::string* error);

  const HostFs* fs_;
  const FeatureTable* features_;
  FgraphCollectorOptions options_;

  std::optional<absl::Time> last_scan_;
  std::vector<v1::BpfKprobeMultiLink> links_;
  std::string scan_error_;
  bool scan_truncated_ = false;

  std::optional<absl::Time> last_slow_;
  std::string slow_tracefs_;  // tracefs path of the cached counts
  std::optional<uint64_t> available_filter_functions_;
  std::string available_error_;
  std::optional<uint64_t> enabled_functions_;
  std::string enabled_error_;
  std::optional<uint64_t> ftrace_filter_functions_;
  std::string filter_error_;
};

}  // namespace tracehealth::agent

#endif  // TRACEHEALTH_AGENT_COLLECT_FGRAPH_COLLECTOR_H_
