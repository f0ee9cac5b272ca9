// The attach model's cost constants (docs/design.md §3.1), each with what
// it rests on; fgraph_explain.cc turns the origins into words.
//
// Thread safety: constants and pure functions.
#ifndef TRACEHEALTH_COMMON_MODELS_FGRAPH_FGRAPH_CONSTANTS_H_
#define TRACEHEALTH_COMMON_MODELS_FGRAPH_FGRAPH_CONSTANTS_H_

#include <cstdint>
#include <vector>

#include "common/models/fgraph/fgraph_walk.h"
#include "proto/tracehealth/v1/predictions.pb.h"

namespace tracehealth {

// c_visit per configuration, from the batch-size thread's seven runs:
// - CONFIG_PREEMPTION builds: the six PREEMPT_LAZY rows (PREEMPT_DYNAMIC
//   booted lazy, 60-core Sapphire Rapids) give 81.2-97.8 ns per visit with
//   ShadowStackWalk's exact visit counts; 88.7 ns is their minimax fit
//   (every row within +-9.2 %).
// - static PREEMPT_NONE/VOLUNTARY builds: the one 6.16 PREEMPT_NONE run
//   (240,000 idle threads, 51.3-54.6 s; the host is not named) gives
//   58.7 ns (+-3.1 % over its three runs).
// No single value fits all seven within +-15 % (the six need 83.1-93.4 ns,
// the seventh 51.5-65.6 ns). Whether the build or the host makes the
// difference is not known: the two were measured on different machines.
inline constexpr double kCVisitPreemptionBuild = 88.7e-9;
inline constexpr double kCVisitStaticBuild = 58.7e-9;
// Beyond the last-level cache, for a host priced with the seed's c_visit:
// the walk goes from task to task through the thread list, each visit's
// load waiting on the one before, so once the tasks a pass walks no longer
// fit the L3 every visit pays a memory miss where it paid an L3 hit,
// kCMissExtra more (an assumption: a server part's DRAM load against its
// L3 hit, about 110 against 35 ns; never measured on a walk). A task keeps
// kCacheBytesPerTask in the cache: two 64-byte lines of its task_struct
// (the thread link, ret_stack), as for threads of one process (an
// assumption; threads of many single-threaded processes touch more, so the
// level would start earlier). The seed's own curve fits it: flat 81-98 ns
// from 100k to 400k threads on a 112.5 MiB L3, where 400k x 128 B = 51 MB
// fits.
inline constexpr double kCMissExtra = 75e-9;
inline constexpr double kCacheBytesPerTask = 128;
// Per pass: rcu_read_lock/unlock, loop set-up, freeing the unused tail (an
// assumption).
inline constexpr double kCPass = 2e-6;
// Per shadow stack handed out: a slab fast-path allocation (an assumption).
inline constexpr double kCAlloc = 20e-9;

// Kernel default of FTRACE_RETSTACK_ALLOC_SIZE through 7.1.
inline constexpr uint32_t kDefaultRetstackBatch = 32;
inline constexpr uint32_t kPatchedRetstackBatch = 1024;
// Call sites assumed when the host did not report them.
inline constexpr uint64_t kDefaultFilterFunctions = 50000;
inline constexpr uint64_t kDefaultKprobeMultiSites = 100;

// The walk's constants for a build (CONFIG_PREEMPTION or not).
WalkConstants WalkConstantsFor(bool preemption_build);

// The seed's price of a visit by the size of the pass on a host whose L3
// (one instance) holds `l3_bytes`: one level from l3_bytes /
// kCacheBytesPerTask tasks at factor 1 + kCMissExtra / c_visit; none (one
// price) when l3_bytes is 0 (not known) or c_visit is not positive.
std::vector<VisitLevel> SeedVisitLevels(double c_visit, uint64_t l3_bytes);

// Registering and removing a probe, per call site (or per probe for
// kretprobes and fentry/fexit, one site each), by probe kind.
struct SiteCosts {
  double attach = 0;
  double detach = 0;
  v1::Anchor attach_anchor = v1::ANCHOR_ASSUMPTION;
  v1::Anchor detach_anchor = v1::ANCHOR_ASSUMPTION;
};
// - function-graph tracers: 1 us per site both ways (batched text_poke; no
//   published figure for enabling function_graph was found). Removal also
//   waits for RCU-tasks grace periods (ftrace_shutdown()), not priced.
// - fprobe kinds (kprobe_multi, session, fprobe events): 21.9 us attach,
//   7.66 us detach per site: 48,712 functions attached in 1.069 s and
//   detached in 0.373 s ("selftests/bpf: Add attach bench test", Jiri Olsa,
//   2022, a kernel without IBT). Where the kernel enforces IBT
//   (fgraph_kernel.h KernelIbtOf): 1.59 ms attach, 0.236 ms detach per
//   site, 56,140 functions attached in 89.174 s and detached in 13.245 s
//   (the same bench on bpf-next, LKML, 2023-12-11, put down by its author
//   to CONFIG_X86_KERNEL_IBT being on).
// - kretprobe: 5.43 ms per probe (184 probes per second, cilium/pwru PR
//   #470); detach assumed the same.
// - fentry/fexit: 6.07 ms attach (2,800 probes in 17 s) and at least
//   107 ms detach (over 5 minutes for them) per probe (bpftrace PR #3053, a
//   5.19 kernel): trampoline updates and RCU-tasks waits.
SiteCosts SiteCostsOf(v1::ProbeKind kind, bool ibt);

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_MODELS_FGRAPH_FGRAPH_CONSTANTS_H_
