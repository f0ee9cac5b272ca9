#include "agent/parsers/vmallocinfo.h"

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
  EXPECT_FALSE(ParseVmallocInfo("MemTotal: 5 kB\nfoo\n", 32768).ok());
  EXPECT_FALSE(ParseVmallocInfo("0x1-0x2 big unpurged vm_area\n", 32768).ok());
  auto empty = ParseVmallocInfo("", 32768);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->areas, 0u);
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
