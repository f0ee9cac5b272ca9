// How KASAN's shadow covers vmalloc space, by the build's KASAN mode: the
// one answer the agent's /proc/vmallocinfo count and the vmap purge model
// use.
//   generic: one shadow byte per 8 bytes (KASAN_SHADOW_SCALE_SHIFT 3), so a
//     shadow page covers 8 pages of vmalloc space;
//   software tags: one per 16 bytes (scale shift 4): 16 pages;
//   hardware tags (arm64 MTE): no shadow memory at all. include/linux/kasan.h
//     declares kasan_release_vmalloc() only under CONFIG_KASAN_GENERIC ||
//     CONFIG_KASAN_SW_TAGS, else an empty inline: a vmap purge frees and
//     flushes no shadow.
// A mode the snapshot does not say (no tag fields: a config without them
// or a sender before them) is taken as generic, the most shadow pages per
// area and so the most flushes: the worst case.
//
// Thread safety: pure functions.
#ifndef TRACEHEALTH_COMMON_MODELS_VMAP_KASAN_SHADOW_H_
#define TRACEHEALTH_COMMON_MODELS_VMAP_KASAN_SHADOW_H_

#include <cstdint>

#include "proto/tracehealth/v1/snapshot.pb.h"

namespace tracehealth {

enum class KasanMode { kGeneric, kSoftwareTags, kHardwareTags };

// CONFIG_KASAN_HW_TAGS, else CONFIG_KASAN_SW_TAGS, else generic.
KasanMode KasanModeOf(const v1::KernelInfo& kernel);

// Pages of vmalloc space one shadow page covers: 8, 16, or 0 (no shadow).
uint32_t PagesPerShadowPage(KasanMode mode);

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_MODELS_VMAP_KASAN_SHADOW_H_
