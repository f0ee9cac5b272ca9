// What a kernel does around the shadow-stack walk (docs/design.md §3.1):
// which probe kinds exist and register an fgraph user, how its preemption
// model (mode, PREEMPT_RCU, the build) bounds the stretches without a
// reschedule point or an RCU quiescent state, and how large a shadow stack
// is. Numbers and rules only; fgraph_explain.cc says them in words.
//
// Thread safety: pure functions.
#ifndef TRACEHEALTH_COMMON_MODELS_FGRAPH_FGRAPH_KERNEL_H_
#define TRACEHEALTH_COMMON_MODELS_FGRAPH_FGRAPH_KERNEL_H_

#include <cstdint>

#include "absl/strings/string_view.h"
#include "common/kernel/feature_table.h"
#include "common/models/kernel_features.h"
#include "proto/tracehealth/v1/predictions.pb.h"
#include "proto/tracehealth/v1/snapshot.pb.h"

namespace tracehealth {

// Probe kinds by how they reach ftrace.
bool IsGraphTracerKind(
    v1::ProbeKind kind);  // function_graph, profiler, display-graph
bool IsFprobeKind(v1::ProbeKind kind);  // kprobe_multi, session, fprobe events
bool IsEntryOnlyFprobeKind(
    v1::ProbeKind kind);  // fprobe users without an exit handler

// Why a probe kind does or does not register an fgraph user on a kernel.
enum class FgraphUseRule {
  kGraphTracer,         // always
  kKretprobe,           // rethook, never fgraph
  kTrampoline,          // fentry/fexit: BPF trampolines, never fgraph
  kNotAProbe,           // PROBE_KIND_UNSPECIFIED
  kReleaseUnknown,      // an fprobe kind on an unknown release: worst case
  kFprobeOnRethook,     // fprobe before 6.14
  kEntryOnlyOffFgraph,  // entry-only fprobe from 6.19 (6.18.32; arm64 .34)
  kEveryFprobe,         // entry-only fprobe from 6.14 until then
  kExitHandler,         // fprobe with an exit handler from 6.14
};

struct FgraphUse {
  FgraphUseRule rule = FgraphUseRule::kNotAProbe;
  bool uses_fgraph = false;
  bool release_known = true;
  // The feature answers consulted, in order; they point into the
  // KernelFeatures passed to DecideFgraphUse.
  const FeatureAnswer* rows[2] = {nullptr, nullptr};
  int nrows = 0;
};
FgraphUse DecideFgraphUse(v1::ProbeKind kind, const KernelFeatures& features);

// Whether a probe kind exists on a kernel.
enum class KindAvailability {
  kAvailable,
  kConfigOff,      // CONFIG_FUNCTION_GRAPH_TRACER or CONFIG_FPROBE off
  kBeforeRelease,  // the release predates the kind (its feature row)
};
struct KindSupport {
  KindAvailability availability = KindAvailability::kAvailable;
  // The row that decided kBeforeRelease (or the row consulted), if any.
  const FeatureAnswer* row = nullptr;
};
// Release rows: kprobe_multi kinds need kprobe_multi_link (5.18), kprobe
// session kprobe_session (6.10), fprobe events fprobe_events (6.5); an
// unknown release makes every kind available (the worst case).
KindSupport SupportOf(v1::ProbeKind kind, const v1::KernelInfo& kernel,
                      const KernelFeatures& features);

// What the preemption model is, as far as the walk cares.
struct Preemption {
  // The mode the kernel runs with: the snapshot's, except that a
  // none/voluntary mode on a kernel that refuses them (7.0+ on
  // architectures with PREEMPT_LAZY) is taken as lazy, its default there.
  v1::PreemptMode mode = v1::PREEMPT_MODE_UNKNOWN;
  bool refused_mode = false;
  // CONFIG_PREEMPT_RCU: measured, derived from the build (every
  // PREEMPT_DYNAMIC, PREEMPT and RT build; static LAZY before 6.15), or
  // assumed off (the worst case) when it cannot be told.
  bool preempt_rcu = false;
  v1::InputSource preempt_rcu_source = v1::INPUT_SOURCE_DEFAULT;
  // CONFIG_PREEMPTION: a PREEMPT_DYNAMIC, PREEMPT, LAZY or RT build, or a
  // static NONE/VOLUNTARY one; assumed a PREEMPTION build when it cannot be
  // told (its c_visit is the larger, so the worst case).
  bool preemption_build = true;
  v1::InputSource build_source = v1::INPUT_SOURCE_DEFAULT;
};
Preemption ResolvePreemption(const v1::KernelInfo& kernel,
                             const KernelFeatures& features);

// The longest stretches of a walk without a reschedule point (what the
// soft-lockup watchdog sees) and without an RCU quiescent state (what the
// RCU stall detector sees), from the whole walk's and one full pass's
// seconds:
//   non_yielding: NONE the walk; VOLUNTARY one pass (each pass's
//     GFP_KERNEL allocations reach might_resched(), a real cond_resched);
//     FULL and LAZY one pass when the pass runs with preemption off
//     (read_lock(&tasklist_lock) before 5.10, or rcu_read_lock() without
//     PREEMPT_RCU), else nothing; RT nothing.
//   no_qs: with PREEMPT_RCU one pass (each pass's rcu_read_unlock() reports
//     the deferred quiescent state); without it at least the pass, and the
//     whole walk on NONE (nothing calls rcu_all_qs()).
// An unknown mode is taken as NONE (the worst case).
struct Stretches {
  double non_yielding = 0;
  double no_qs = 0;
  // Each stretch is the whole walk (it grows with N_null), not one pass.
  bool non_yielding_is_walk = false;
  bool no_qs_is_walk = false;
};
Stretches WalkStretches(const Preemption& p, bool walk_under_rcu,
                        double walk_seconds, double pass_seconds);

// Whether ftrace_replace_code() reschedules between the sites it patches
// on `arch` (uname -m, normalized: kernel_features.h): arm64, riscv and
// loongarch ask for it (their arch_ftrace_update_code() sets
// FTRACE_MAY_SLEEP, and the loop in kernel/trace/ftrace.c then calls
// cond_resched() after each record); x86's own ftrace_replace_code()
// (arch/x86/kernel/ftrace.c) queues every site to text_poke_queue() and
// flushes with no reschedule point, called straight from
// arch_ftrace_update_code(). Unknown: no (the worst case).
bool PatchingReschedules(absl::string_view arch);

// Whether a probe kind's sites are patched in one ftrace update (one
// ftrace_replace_code() over all of them): the function-graph tracers and
// the fprobe kinds (one ftrace_ops with every site in its filter). A
// kretprobe patches its one site; fentry/fexit update one trampoline per
// probe, each attach waiting on RCU-tasks grace periods (sleeping), so
// their per-probe cost is no stretch of CPU.
bool PatchesInOneUpdate(v1::ProbeKind kind);

// `walk` (a walk's stretches, or none) with the patching that follows it
// under ftrace_lock. Where patching does not reschedule and the mode does
// not preempt a kernel thread (NONE, VOLUNTARY, or unknown), the patching
// is a stretch without a reschedule point: on NONE (and unknown) joined to
// a walk that is one such stretch (nothing between the walk and the
// patching calls cond_resched(): taken as joined, the worst case), else on
// its own. It is also a stretch without an RCU quiescent state unless the
// kernel has PREEMPT_RCU (then the tick reports one: patching runs outside
// any RCU reader with preemption counted on). FULL, LAZY and RT preempt it.
Stretches WithPatching(const Preemption& p, bool patching_reschedules,
                       Stretches walk, double patch_seconds);

// The seconds of `patch_seconds` that run without a reschedule point under
// the rule above: all of it where patching does not reschedule and the
// mode is NONE, VOLUNTARY or unknown, else 0. WithPatching and the
// explanation both take it from here.
double NonYieldingPatchSeconds(const Preemption& p, bool patching_reschedules,
                               double patch_seconds);

// Bytes of the return-probe nodes an fprobe with an exit handler
// preallocates before 6.14, when fprobe sits on rethook
// (kernel/trace/fprobe.c fprobe_init_rethook(): without nr_maxactive,
// sites x num_possible_cpus() x 2 nodes; each a struct fprobe_rethook_node,
// a 48-byte rethook_node plus the entry ip(s) and the entry data, taken as
// 64 bytes: a kmalloc-64 object each before 6.7, slots of an objpool
// from 6.7). 5,000 functions on 256 CPUs: 163.84 MB.
uint64_t RethookNodeBytes(uint64_t sites, uint32_t possible_cpus);
inline constexpr uint64_t kRethookNodeBytes = 64;

// A second fgraph user from 6.11: init_task_vars() walks every thread once
// under read_lock(&tasklist_lock), with preemption off on every mode but
// RT.
Stretches SecondUserStretches(const Preemption& p, double pass_seconds);

// Whether the kernel enforces Indirect Branch Tracking, which makes
// registering an fprobe on a function about 70 times dearer
// (fgraph_constants.h SiteCostsOf). On: x86-64, CONFIG_X86_KERNEL_IBT, the
// CPU's `ibt` flag in /proc/cpuinfo, and no `ibt=off` on the command line.
// Other architectures have none (known off). `known` is false, and `on`
// false, when the config or the CPU's flags could not be read.
struct KernelIbt {
  bool on = false;
  bool known = false;
};
KernelIbt KernelIbtOf(const v1::HostSnapshot& snapshot);

// Bytes of one thread's shadow stack: 4096 from 6.13 (its own cache), the
// page size on 6.11-6.12 (kmalloc(PAGE_SIZE): 64 KiB with 64 KiB pages);
// before, kmalloc_array(FTRACE_RETFUNC_DEPTH = 50, sizeof(struct
// ftrace_ret_stack)): ret, func, calltime, subtime (CONFIG_FUNCTION_PROFILER,
// assumed set as the distributions build it) and retp, 40 bytes on x86-64
// (2,000: kmalloc-2048), plus fp on aarch64 (HAVE_FUNCTION_GRAPH_FP_TEST):
// 48 bytes, 2,400, kmalloc-4096 (measured: 3,400 bytes a thread of MemFree
// on Debian's 6.1 arm64 kernel, 2,048 on x86-64). 4096 when the release is
// unknown.
uint32_t ShadowStackBytesPerThread(const KernelFeatures& features,
                                   uint32_t page_size);

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_MODELS_FGRAPH_FGRAPH_KERNEL_H_
