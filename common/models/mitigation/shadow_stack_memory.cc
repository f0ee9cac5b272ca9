#include "common/models/mitigation/shadow_stack_memory.h"

#include "absl/strings/str_cat.h"
#include "common/models/fgraph/fgraph_kernel.h"
#include "common/models/kernel_features.h"

namespace tracehealth {

std::optional<ShadowStackSize> ShadowStackBytes(const v1::KernelInfo& kernel,
                                                const FeatureTable& features) {
  const KernelFeatures f = ResolveKernelFeatures(kernel, features);
  if (!f.release) return std::nullopt;
  // The bytes are the fgraph model's (one rule for both); the origin says
  // which feature row decided them.
  const uint64_t bytes = ShadowStackBytesPerThread(
      f, kernel.has_page_size() ? kernel.page_size() : 0);
  if (f.shadow_stack_4k.present) {
    return ShadowStackSize{bytes, absl::StrCat("4 KiB fgraph_stack object (",
                                               f.shadow_stack_4k.row, ")")};
  }
  if (f.shadow_stack_page_kmalloc.present) {
    return ShadowStackSize{bytes,
                           absl::StrCat("one page from kmalloc (",
                                        f.shadow_stack_page_kmalloc.row, ")")};
  }
  return ShadowStackSize{
      bytes, absl::StrCat("50 ret_stack entries in kmalloc-", bytes, " (",
                          f.shadow_stack_page_kmalloc.row, ")")};
}

}  // namespace tracehealth
