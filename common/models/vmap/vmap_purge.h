// KASAN vmalloc purge model (docs/design.md §3.3).
//
// With CONFIG_KASAN_VMALLOC, lazily freed vmalloc areas are purged once
// their pages exceed lazy_max_pages() = fls(online CPUs) * 32 MiB /
// PAGE_SIZE. Before the combining change (6.13; 6.12.y from 6.12.6) the
// purge issued one flush_tlb_kernel_range() per purged area owning a whole
// shadow page, plus one; after it, one per active vmap node plus one. Each
// flush IPIs every online CPU and waits (no IPIs with a broadcast invlpgb
// flush on 6.17+ CPUs with the flag).
//
// Thread safety: pure functions.
#ifndef TRACEHEALTH_COMMON_MODELS_VMAP_VMAP_PURGE_H_
#define TRACEHEALTH_COMMON_MODELS_VMAP_VMAP_PURGE_H_

#include <cstdint>

#include "common/models/kernel_features.h"
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

// The vmap purge prediction (see evaluate.h).
v1::VmapPurgePrediction PredictVmapPurge(const v1::HostSnapshot& snapshot,
                                         const ModelOptions& options);
// The same into `*out` (reset first, its basis memory reused), with the
// snapshot's features resolved by the caller.
void PredictVmapPurge(const v1::HostSnapshot& snapshot, const ModelOptions& options,
                      const KernelFeatures& features, v1::VmapPurgePrediction* out);

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_MODELS_VMAP_VMAP_PURGE_H_
