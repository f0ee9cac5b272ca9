#include "common/models/vmap/kasan_shadow.h"

#include "gtest/gtest.h"

namespace tracehealth {
namespace {

TEST(KasanShadowTest, ModesAndTheirShadow) {
  v1::KernelInfo k;
  // Nothing said: generic, the worst case.
  EXPECT_EQ(KasanModeOf(k), KasanMode::kGeneric);
  EXPECT_EQ(PagesPerShadowPage(KasanModeOf(k)), 8u);
  k.set_config_kasan_generic(true);
  EXPECT_EQ(KasanModeOf(k), KasanMode::kGeneric);
  k.set_config_kasan_generic(false);
  k.set_config_kasan_sw_tags(true);
  EXPECT_EQ(KasanModeOf(k), KasanMode::kSoftwareTags);
  EXPECT_EQ(PagesPerShadowPage(KasanModeOf(k)), 16u);
  k.set_config_kasan_sw_tags(false);
  k.set_config_kasan_hw_tags(true);
  EXPECT_EQ(KasanModeOf(k), KasanMode::kHardwareTags);
  EXPECT_EQ(PagesPerShadowPage(KasanModeOf(k)), 0u);
}

}  // namespace
}  // namespace tracehealth
