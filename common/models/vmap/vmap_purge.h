// KASAN vmalloc purge model, the numbers (docs/design.md §3.3).
//
// With CONFIG_KASAN_VMALLOC, lazily freed vmalloc areas are purged once
// their pages exceed lazy_max_pages() = fls(online CPUs) * 32 MiB /
// PAGE_SIZE. Before the combining change (6.13; 6.12.y from 6.12.6) the
// purge issued one flush_tlb_kernel_range() per purged area owning a whole
// shadow page, plus one; after it, one per active vmap node plus one. Each
// flush IPIs every online CPU and waits (no IPIs with a broadcast invlpgb
// flush on 6.17+ CPUs with the flag).
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
};

// The kernel caps vmap nodes at 128 (vmap_init_nodes clamps the CPU count).
inline constexpr uint32_t kMaxVmapNodes = 128;

// lazy_max_pages(): fls(cpus) * 32 MiB / page_size.
uint64_t LazyMaxPages(uint32_t online_cpus, uint32_t page_size);
// Highest set bit, 1-based (fls(256) = 9, fls(0) = 0).
int Fls(uint32_t x);
// Vmap nodes for `cpus`: min(cpus, 128), at least 1. The kernel sizes the
// node array from possible CPUs; online CPUs stand in for them.
uint32_t VmapNodes(uint32_t cpus);
// Per-flush seconds for `cpus` with IPIs (a + b * cpus) or with invlpgb.
double PerFlushSeconds(uint32_t cpus, bool invlpgb, const VmapConstants& c);

// The inputs of a vmap purge prediction, in the order its basis lists them.
enum class VmapInput {
  kConfigKasanVmalloc,  // kernel.config_kasan_vmalloc
  kCpus,                // cpus.online
  kPageSize,            // kernel.page_size
  kUnpurgedBytes,       // vmalloc.unpurged_bytes
  kRelease,             // kernel.release
  kInvlpgb,             // cpus.invlpgb
  kShadowPageAreas,     // vmalloc.unpurged_shadow_page_areas
  kUnpurgedAreas,       // vmalloc.unpurged_areas
  kPreemptMode,         // kernel.preempt_mode
};
using VmapInputs = ModelInputs<VmapInput, 10>;

// How the flushes of one purge are counted: one per active vmap node (the
// combining change), one per pending area owning a whole shadow page, one
// per pending area (an upper bound), or the worst case at the lazy
// threshold when nothing is known of the pending areas.
enum class FlushesFrom { kVmapNodes, kShadowPageAreas, kAreas, kLazyThreshold };

// What decides a vmap purge prediction.
struct VmapCase {
  bool config_known = false;  // CONFIG_KASAN_VMALLOC known
  bool applies = false;       // ... and on
  uint32_t cpus = 0;
  uint32_t page_size = 0;
  bool release_known = false;
  bool combined = false;      // kasan_flush_combined
  bool cond_resched = false;  // kasan_purge_cond_resched
  bool invlpgb = false;       // invlpgb_kernel_flush and the CPU flag
  FlushesFrom flushes_from = FlushesFrom::kLazyThreshold;
  // With kVmapNodes: the active nodes counted, and whether the pending
  // areas bounded them (at most one node per area) rather than the CPUs.
  uint32_t nodes = 0;
  bool nodes_from_areas = false;
  VmapInputs inputs;
  int unknown_inputs = 0;
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
