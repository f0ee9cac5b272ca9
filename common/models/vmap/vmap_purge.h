// KASAN vmalloc purge model, the numbers (docs/design.md §3.3).
//
// With CONFIG_KASAN_VMALLOC, lazily freed vmalloc areas are purged once
// their pages exceed lazy_max_pages() = fls(online CPUs) * 32 MiB /
// PAGE_SIZE. Before the combining change (6.13; 6.12.y from 6.12.4) the
// purge issued one flush_tlb_kernel_range() per purged area owning a whole
// shadow page, plus one; after it, one per active vmap node plus one (vmap
// nodes: possible CPUs clamped to 1..128, on 64-bit kernels). On x86 each
// flush IPIs every online CPU and waits (no IPIs with a broadcast invlpgb
// flush on 6.15+ CPUs with the flag); on arm64 it is a broadcast TLBI,
// whose cost follows the range, not the CPU count. Before 6.9 (per-node
// purge lists) the purge loop ran cond_resched_lock() between areas once
// the backlog was under twice the threshold; 7.0 and 6.18.16 reschedule
// every 32 areas.
//
// This file computes what a report carries (numbers, risk, checks,
// confidence); vmap_explain.h writes the summary and basis.
//
// Thread safety: pure functions.
#ifndef TRACEHEALTH_COMMON_MODELS_VMAP_VMAP_PURGE_H_
#define TRACEHEALTH_COMMON_MODELS_VMAP_VMAP_PURGE_H_

#include <cstdint>

#include "common/models/kernel_features.h"
#include "common/models/model_inputs.h"
#include "common/models/model_options.h"
#include "common/models/vmap/kasan_shadow.h"
#include "proto/tracehealth/v1/predictions.pb.h"
#include "proto/tracehealth/v1/snapshot.pb.h"

namespace tracehealth {

struct VmapConstants {
  // Per-flush cost a + b * cpus (seconds), anchored on seed 004: 23.87 s over
  // 2,805 flushes on 256 CPUs = 8.51 ms per flush. `a` (local flush and call
  // set-up) is an assumption; `b` follows from the anchor. The anchor was
  // taken with function_graph tracing on and `make -j` running, so it is an
  // upper anchor, not a typical cost.
  double a = 10e-6;
  double b = (23.87 / 2805 - 10e-6) / 256;
  // Per flush with a broadcast invlpgb (no IPIs): an assumption of the order
  // of a few range invalidations plus tlbsync.
  double invlpgb_flush = 20e-6;
  // Per flush on arm64 (broadcast TLBI vaale1is per page, at most
  // MAX_TLBI_OPS before a flush_tlb_all): an assumption of the same order.
  double tlbi_flush = 20e-6;
};

// The kernel caps vmap nodes at 128 (vmap_init_nodes clamps the CPU count).
inline constexpr uint32_t kMaxVmapNodes = 128;

// lazy_max_pages(): fls(cpus) * 32 MiB / page_size.
uint64_t LazyMaxPages(uint32_t online_cpus, uint32_t page_size);
// Highest set bit, 1-based (fls(256) = 9, fls(0) = 0).
int Fls(uint32_t x);
// Vmap nodes for `possible_cpus` (vmap_init_nodes: clamp(possible CPUs, 1,
// 128) on 64-bit kernels; 1 on 32-bit ones).
uint32_t VmapNodes(uint32_t possible_cpus, bool is_64bit = true);
// How a flush reaches the other CPUs.
enum class FlushKind { kIpi, kInvlpgb, kBroadcastTlbi };
// Per-flush seconds for `cpus` online: a + b * cpus with IPIs, one
// broadcast otherwise.
double PerFlushSeconds(uint32_t cpus, FlushKind kind, const VmapConstants& c);

// The inputs of a vmap purge prediction, in the order its basis lists them.
enum class VmapInput {
  kConfigKasanVmalloc,  // kernel.config_kasan_vmalloc
  kCpus,                // cpus.online
  kPossibleCpus,        // cpus.possible
  kArch,                // kernel.arch
  kPageSize,            // kernel.page_size
  kUnpurgedBytes,       // vmalloc.unpurged_bytes
  kRelease,             // kernel.release
  kInvlpgb,             // cpus.invlpgb
  kShadowPageAreas,     // vmalloc.unpurged_shadow_page_areas
  kUnpurgedAreas,       // vmalloc.unpurged_areas
  kPreemptMode,         // kernel.preempt_mode
};
using VmapInputs = ModelInputs<VmapInput, 12>;

// How the flushes of one purge are counted: one per active vmap node (the
// combining change), one per pending area owning a whole shadow page, one
// per pending area (an upper bound), or the worst case at the lazy
// threshold when nothing is known of the pending areas.
enum class FlushesFrom { kVmapNodes, kShadowPageAreas, kAreas, kLazyThreshold };

// What decides a vmap purge prediction.
struct VmapCase {
  bool config_known = false;  // CONFIG_KASAN_VMALLOC known
  // ... and on, with a KASAN mode that keeps shadow memory (not hardware
  // tags: kasan_shadow.h).
  bool applies = false;
  KasanMode kasan_mode = KasanMode::kGeneric;
  uint32_t pages_per_shadow_page = 8;
  uint32_t cpus = 0;
  // Possible CPUs (online when unknown) and whether the kernel is 64-bit.
  uint32_t possible_cpus = 0;
  bool is_64bit = true;
  uint32_t page_size = 0;
  bool release_known = false;
  bool combined = false;      // kasan_flush_combined
  bool cond_resched = false;  // kasan_purge_cond_resched
  // Before 6.9 (no vmap_node_purge_lists): cond_resched_lock() between
  // areas while the backlog is under twice the threshold.
  bool purge_lock_resched = false;
  bool invlpgb = false;  // invlpgb_kernel_flush and the CPU flag
  bool arm64 = false;    // broadcast TLBI flushes
  FlushesFrom flushes_from = FlushesFrom::kLazyThreshold;
  // With kVmapNodes: the active nodes counted, and whether the pending
  // areas bounded them (at most one node per area) rather than the CPUs.
  uint32_t nodes = 0;
  bool nodes_from_areas = false;
  VmapInputs inputs;
  int unknown_inputs = 0;
  // Feature rows used whose inferred release is next to this kernel's
  // (each counts as an input taken by default).
  int uncertain_rows = 0;
};
VmapCase MakeVmapCase(const v1::HostSnapshot& snapshot,
                      const KernelFeatures& features);

// The vmap purge prediction's numbers (see evaluate.h): everything but the
// summary and the basis's lists (vmap_explain.h writes those).
v1::VmapPurgePrediction PredictVmapPurge(const v1::HostSnapshot& snapshot,
                                         const ModelOptions& options);
// The same into `*out` (reset first, its basis memory kept), with the
// snapshot's features resolved by the caller.
void PredictVmapPurge(const v1::HostSnapshot& snapshot,
                      const ModelOptions& options,
                      const KernelFeatures& features,
                      v1::VmapPurgePrediction* out);

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_MODELS_VMAP_VMAP_PURGE_H_
