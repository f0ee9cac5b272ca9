#include "common/models/mitigation/shadow_stack_memory.h"

#include "absl/strings/str_cat.h"
#include "common/kernel/release.h"

namespace tracehealth {

std::optional<ShadowStackSize> ShadowStackBytes(const v1::KernelInfo& kernel,
                                                const FeatureTable& features) {
  if (!kernel.has_release()) return std::nullopt;
  absl::StatusOr<KernelRelease> release = ParseKernelRelease(kernel.release());
  if (!release.ok()) return std::nullopt;
  const FeatureAnswer cache = features.Has(feature::kShadowStack4k, *release);
  if (cache.present) {
    return ShadowStackSize{
        kShadowStackBytes4k,
        absl::StrCat("4 KiB fgraph_stack object (", cache.row, ")")};
  }
  const FeatureAnswer page =
      features.Has(feature::kShadowStackPageKmalloc, *release);
  if (page.present) {
    const uint64_t bytes =
        kernel.has_page_size() ? kernel.page_size() : kDefaultPageSize;
    return ShadowStackSize{
        bytes, absl::StrCat("one page from kmalloc (", page.row, ")")};
  }
  return ShadowStackSize{
      kShadowStackBytesKmalloc2048,
      absl::StrCat("50 ret_stack entries in kmalloc-2048 (", page.row, ")")};
}

}  // namespace tracehealth
