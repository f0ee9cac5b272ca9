// Memory of one fgraph shadow stack per task, by kernel release (feature
// table rows shadow_stack_4k and shadow_stack_page_kmalloc), by the fgraph
// model's rule (ShadowStackBytesPerThread):
//
//   6.13+        4096 bytes, from the fgraph_stack kmem cache
//   6.11-6.12    PAGE_SIZE, from kmalloc (64 KiB with 64 KiB pages)
//   before 6.11  50 ret_stack entries from kmalloc: 40 bytes each on
//                x86-64 (kmalloc-2048), 48 on aarch64 (kmalloc-4096)
//
// Every task gets one when fgraph first goes active (the walk) and every
// task forked while it stays active; they are freed only when a task exits.
// A host that keeps one graph user standing therefore holds N_total of them.
//
// Thread safety: pure functions.
#ifndef TRACEHEALTH_COMMON_MODELS_MITIGATION_SHADOW_STACK_MEMORY_H_
#define TRACEHEALTH_COMMON_MODELS_MITIGATION_SHADOW_STACK_MEMORY_H_

#include <cstdint>
#include <optional>
#include <string>

#include "common/kernel/feature_table.h"
#include "proto/tracehealth/v1/snapshot.pb.h"

namespace tracehealth {

struct ShadowStackSize {
  uint64_t bytes = 0;
  // "4 KiB fgraph_stack object (shadow_stack_4k: since 6.13 -> 6.16.12: yes)".
  std::string origin;
};

// Bytes per task on `kernel`'s release (its page size for 6.11-6.12, 4 KiB
// when unknown); nullopt when the release is unknown or does not parse.
std::optional<ShadowStackSize> ShadowStackBytes(const v1::KernelInfo& kernel,
                                                const FeatureTable& features);

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_MODELS_MITIGATION_SHADOW_STACK_MEMORY_H_
