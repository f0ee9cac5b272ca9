#include "common/models/vmap/kasan_shadow.h"

namespace tracehealth {

KasanMode KasanModeOf(const v1::KernelInfo& kernel) {
  if (kernel.config_kasan_hw_tags()) return KasanMode::kHardwareTags;
  if (kernel.config_kasan_sw_tags()) return KasanMode::kSoftwareTags;
  return KasanMode::kGeneric;
}

uint32_t PagesPerShadowPage(KasanMode mode) {
  switch (mode) {
    case KasanMode::kGeneric:
      return 8;
    case KasanMode::kSoftwareTags:
      return 16;
    case KasanMode::kHardwareTags:
      break;
  }
  return 0;
}

}  // namespace tracehealth
