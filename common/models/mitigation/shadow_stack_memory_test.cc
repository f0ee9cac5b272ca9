#include "common/models/mitigation/shadow_stack_memory.h"

#include "gtest/gtest.h"

namespace tracehealth {
namespace {

std::optional<ShadowStackSize> For(const char* release, uint32_t page = 0) {
  v1::KernelInfo k;
  if (release != nullptr) k.set_release(release);
  if (page != 0) k.set_page_size(page);
  return ShadowStackBytes(k, FeatureTable::Builtin());
}

TEST(ShadowStackBytesTest, ByRelease) {
  // 6.13 and later: 4 KiB objects, whatever the page size.
  EXPECT_EQ(For("6.13.0")->bytes, 4096u);
  EXPECT_EQ(For("6.16.12-cloud-amd64", 16384)->bytes, 4096u);
  EXPECT_EQ(For("6.13.0")->origin.rfind("4 KiB fgraph_stack object (", 0), 0u);
  // 6.11-6.12: one page.
  EXPECT_EQ(For("6.12.5", 16384)->bytes, 16384u);
  EXPECT_EQ(For("6.11.0")->bytes, 4096u);
  EXPECT_EQ(For("6.11.0")->origin.rfind("one page from kmalloc (", 0), 0u);
  // Before: kmalloc-2048.
  EXPECT_EQ(For("6.10.14")->bytes, 2048u);
  EXPECT_EQ(For("6.1.0-28-amd64")->bytes, 2048u);
  // Unknown or unparsable release.
  EXPECT_FALSE(For(nullptr).has_value());
  EXPECT_FALSE(For("not-a-release").has_value());
}

}  // namespace
}  // namespace tracehealth
