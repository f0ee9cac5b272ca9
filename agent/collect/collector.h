// Collector: reads every input of docs/design.md §4 through a HostFs and
// assembles a HostSnapshot. Every input is optional: a missing, unreadable
// or malformed file leaves its field unset and adds an UnknownInput with the
// reason; nothing here crashes on an odd host, and nothing is written to the
// host (only to the agent's own state directory).
//
// Cost per cycle is independent of the thread count: threads come from
// /proc/loadavg, forks from /proc/stat, N_null from the fork delta since
// fgraph was last seen active (FgraphMemory). Inputs fixed for a boot
// (release, version, config, cmdline, cpuinfo) are read once per collector;
// inputs whose size grows with threads, processes or mounts (vmallocinfo,
// the fdinfo scan, the mounts) and the large function lists and page_owner
// stacks are read rarely (see the options), and what every input cost is in
// cycle_costs().
//
// Thread safety: not thread-safe; one owner. `fs` and `features` are not
// owned and must outlive the collector.
#ifndef TRACEHEALTH_AGENT_COLLECT_COLLECTOR_H_
#define TRACEHEALTH_AGENT_COLLECT_COLLECTOR_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "agent/collect/fgraph_collector.h"
#include "agent/collect/kernel_facts.h"
#include "agent/collect/unknown_input.h"
#include "agent/state/depot_history.h"
#include "agent/state/fgraph_memory.h"
#include "common/kernel/feature_table.h"
#include "common/procfs/host_fs.h"
#include "proto/tracehealth/v1/snapshot.pb.h"

namespace tracehealth::agent {

struct CollectorOptions {
  // Where the fgraph last-active record lives; "" keeps it in memory only.
  std::string state_dir;
  FgraphCollectorOptions fgraph;
  // /proc/vmallocinfo has a line per vmap area, so one per thread stack
  // (VMAP_STACK): 400,000 threads make it about 40 MB. Before 6.9 each
  // read() of it restarts the kernel's walk of the area list from the start
  // under vmap_area_lock, which every thread creation takes, and returns at
  // most a page: reading it costs the host time quadratic in the thread
  // count. It is read only where the vmap purge model applies
  // (CONFIG_KASAN_VMALLOC=y in the kernel config), at this interval; between
  // reads the last counts stand (VmallocState.vmallocinfo_read_at).
  // InfiniteDuration: never.
  absl::Duration vmallocinfo_interval = absl::Minutes(10);
  // /proc/1/mounts (else /proc/mounts) grows with the host's mounts (every
  // container adds some); it is read at this interval, and sooner when a
  // stat() per cycle sees tracefs mounted at /sys/kernel/tracing where there
  // was none.
  absl::Duration mounts_interval = absl::Minutes(10);
  // page_owner_stacks/show_stacks (the trie measurement) is read and run
  // through the trie at this interval.
  absl::Duration trie_interval = absl::Minutes(10);
  // Stack depot history: at most this many samples, at least this far apart.
  size_t depot_history_max = 64;
  absl::Duration depot_sample_spacing = absl::Minutes(5);
  // Feature table (not owned).
  const FeatureTable* features = &FeatureTable::Builtin();
};

class Collector {
 public:
  Collector(const HostFs* fs, CollectorOptions options,
            std::function<absl::Time()> clock);

  // One collection cycle. Never fails: problems become UnknownInputs.
  v1::HostSnapshot Collect();

  // Problems with the agent's own state (e.g. the state directory is not
  // writable) since the last call, for the agent's log.
  std::vector<std::string> TakeWarnings();

  // What the last Collect() read, by input (everything read through `fs`
  // since the Collect() before it).
  const InputCosts& cycle_costs() const { return cycle_costs_; }

 private:
  using Unknowns = UnknownInputs;

  // Where tracefs and debugfs are mounted (cached, see mounts_interval).
  void LocateMounts(absl::Time now, Unknowns* unknown);
  void CollectPreempt(const std::optional<std::string>& debugfs,
                      v1::KernelInfo* kernel, Unknowns* unknown);
  void CollectThreads(v1::HostSnapshot* s);
  void CollectThresholds(v1::Thresholds* t, Unknowns* unknown);
  void CollectCpus(v1::CpuInfo* cpus, Unknowns* unknown);
  void CollectStackDepot(const std::optional<std::string>& debugfs,
                         absl::Time now, v1::HostSnapshot* s);
  void CollectVmalloc(absl::Time now, v1::HostSnapshot* s);
  // Reads /proc/vmallocinfo into vmalloc_cache_ (or vmalloc_error_).
  // Counts /proc/vmallocinfo's areas; an area of `pages_per_shadow` pages
  // owns a whole shadow page (common/models/vmap/kasan_shadow.h; 0: no
  // shadow, not counted).
  void ReadVmallocinfo(uint64_t page, uint32_t pages_per_shadow);
  void CollectTrie(const std::optional<std::string>& debugfs, absl::Time now,
                   v1::HostSnapshot* s);

  const HostFs* fs_;
  CollectorOptions options_;
  std::function<absl::Time()> clock_;
  FgraphCollector fgraph_;
  FgraphMemory memory_;
  std::vector<std::string> warnings_;
  InputCosts cycle_costs_;

  // Inputs fixed for this boot, read on the first cycle.
  std::optional<KernelFacts> facts_;

  DepotHistory depot_history_;
  BootIdentity boot_;

  std::optional<absl::Time> last_mounts_;
  std::optional<std::string> tracefs_, debugfs_;
  std::string mounts_error_;

  std::optional<absl::Time> last_vmallocinfo_;
  v1::VmallocState vmalloc_cache_;
  std::string vmalloc_error_;

  std::optional<absl::Time> last_trie_;
  std::optional<v1::TrieMeasurement> trie_;
  std::string trie_error_;
};

}  // namespace tracehealth::agent

#endif  // TRACEHEALTH_AGENT_COLLECT_COLLECTOR_H_
