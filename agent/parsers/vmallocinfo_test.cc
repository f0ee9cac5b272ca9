#include "agent/parsers/vmallocinfo.h"

#include <string>

#include "gtest/gtest.h"

namespace tracehealth::agent {
namespace {

constexpr char kInfo[] =
    "0x00000000b628df3a-0x00000000d6a50f80   20480 "
    "irq_init_percpu_irqstack+0xed/0x120 vmap\n"
    "0x00000000d6a50f80-0x00000000ecab4f2a    8192 "
    "acpi_os_map_iomem+0x1bc/0x1e0 "
    "phys=0x00000000000a0000 ioremap\n"
    "0x0000000011111111-0x0000000022222222   40960 unpurged vm_area\n"
    "0x0000000022222222-0x0000000033333333    8192 unpurged vm_area\n"
    "0x0000000033333333-0x0000000044444444   16384 vm_map_ram\n"
    "0x0000000044444444-0x0000000055555555   36864 unpurged vm_area\n";

TEST(VmallocInfoTest, CountsUnpurgedAreas) {
  auto r = ParseVmallocInfo(kInfo, 8 * 4096);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->areas, 6u);
  EXPECT_EQ(r->unpurged_areas, 3u);
  EXPECT_EQ(r->unpurged_bytes, 40960u + 8192u + 36864u);
  EXPECT_EQ(r->unpurged_shadow_page_areas, 2u);
  EXPECT_EQ(r->malformed_lines, 0u);
}

TEST(VmallocInfoTest, ToleratesAFewOddLinesRejectsGarbage) {
  auto few = ParseVmallocInfo(std::string(kInfo) + "odd line\n", 32768);
  ASSERT_TRUE(few.ok());
  EXPECT_EQ(few->malformed_lines, 1u);
  absl::StatusOr<VmallocCounts> bad =
      ParseVmallocInfo("MemTotal: 5 kB\nfoo\n", 32768);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(), "vmallocinfo: 2 of 2 lines malformed");
  bad = ParseVmallocInfo("0x1-0x2 big unpurged vm_area\n", 32768);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(), "vmallocinfo: 1 of 1 lines malformed");
  auto empty = ParseVmallocInfo("", 32768);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->areas, 0u);
}

// Up to half the lines may be malformed: 1 of 2 is accepted, 2 of 3 not.
TEST(VmallocInfoTest, HalfMalformedIsTheLimit) {
  constexpr char kArea[] = "0x1000-0x2000    4096 unpurged vm_area\n";
  auto half = ParseVmallocInfo(std::string(kArea) + "odd\n", 32768);
  ASSERT_TRUE(half.ok()) << half.status();
  EXPECT_EQ(half->areas, 1u);
  EXPECT_EQ(half->malformed_lines, 1u);
  auto more = ParseVmallocInfo(std::string(kArea) + "odd\nodder\n", 32768);
  EXPECT_EQ(more.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(more.status().message(), "vmallocinfo: 2 of 3 lines malformed");
}

// An unpurged area owns a whole shadow page from the shadow page's size up:
// 32,768 bytes with 4 KiB pages (8 pages per shadow page) counts, 32,767
// does not.
TEST(VmallocInfoTest, ShadowPageAreaBoundary) {
  auto r = ParseVmallocInfo(
      "0x1000-0x9000   32768 unpurged vm_area\n"
      "0x9000-0x11000  32767 unpurged vm_area\n"
      "0x11000-0x21000 65536 unpurged vm_area\n",
      8 * 4096);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->unpurged_areas, 3u);
  EXPECT_EQ(r->unpurged_bytes, 32768u + 32767u + 65536u);
  EXPECT_EQ(r->unpurged_shadow_page_areas, 2u);  // 32,768 and 65,536
}

TEST(VmallocInfoTest, LineByLineMatchesWholeText) {
  VmallocInfoCounter c(32768);
  c.AddLine("0x0000000011111111-0x0000000022222222   40960 unpurged vm_area");
  c.AddLine("");
  auto r = c.Result();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->unpurged_areas, 1u);
}

}  // namespace
}  // namespace tracehealth::agent
