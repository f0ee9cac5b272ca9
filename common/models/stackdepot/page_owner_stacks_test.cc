#include "common/models/stackdepot/page_owner_stacks.h"

#include "gtest/gtest.h"

namespace tracehealth {
namespace {

// As stack_print() writes it: " %pS\n" per frame, "nr_base_pages: %d\n\n".
constexpr char kShowStacks[] =
    " post_alloc_hook+0x177/0x1a0\n"
    " get_page_from_freelist+0x6d6/0x2ab0\n"
    " __alloc_pages_noprof+0x1d1/0x480\n"
    " alloc_pages_mpol_noprof+0xe7/0x1c0\n"
    " ext4_mb_load_buddy_gfp+0x1e2/0x4a0 [ext4]\n"
    "nr_base_pages: 12\n"
    "\n"
    " post_alloc_hook+0x177/0x1a0\n"
    " get_page_from_freelist+0x6d6/0x2ab0\n"
    " 0xffffffffc0a01234\n"
    "nr_base_pages: 3\n"
    "\n";

TEST(PageOwnerStacksTest, ParsesBlocks) {
  auto stacks = ParsePageOwnerStacks(kShowStacks);
  ASSERT_TRUE(stacks.ok()) << stacks.status();
  ASSERT_EQ(stacks->size(), 2u);
  EXPECT_EQ((*stacks)[0].frames.size(), 5u);
  EXPECT_EQ((*stacks)[0].frames[4],
            "ext4_mb_load_buddy_gfp+0x1e2/0x4a0 [ext4]");
  EXPECT_EQ((*stacks)[0].nr_base_pages, 12u);
  EXPECT_EQ((*stacks)[1].nr_base_pages, 3u);
}

TEST(PageOwnerStacksTest, Errors) {
  EXPECT_EQ(ParsePageOwnerStacks("nr_base_pages: 3\n").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      ParsePageOwnerStacks(" a+0x1/0x2\nnr_base_pages: x\n").status().code(),
      absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParsePageOwnerStacks(" a+0x1/0x2\ngarbage\n").status().code(),
            absl::StatusCode::kInvalidArgument);
  auto truncated =
      ParsePageOwnerStacks(" a+0x1/0x2\nnr_base_pages: 1\n\n b+0x1/0x2\n");
  EXPECT_EQ(truncated.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(truncated.status().message().find("truncated"), std::string::npos);
  auto empty = ParsePageOwnerStacks("");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

TEST(PageOwnerStacksTest, SyntheticAddresses) {
  FrameAddressMap map;
  const uint64_t a = map.AddressOf("post_alloc_hook+0x177/0x1a0");
  const uint64_t b = map.AddressOf("get_page_from_freelist+0x6d6/0x2ab0");
  EXPECT_NE(a, b);
  EXPECT_EQ(map.AddressOf("post_alloc_hook+0x177/0x1a0"), a);
  EXPECT_EQ(a >> 32, 0xffffffffull);  // compressible, like kernel text
  EXPECT_EQ(map.AddressOf("0xffffc90000001000"), 0xffffc90000001000ull);
  EXPECT_EQ(map.size(), 2u);
}

}  // namespace
}  // namespace tracehealth
