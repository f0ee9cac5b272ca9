#include "agent/parsers/cpu.h"

#include "gtest/gtest.h"

namespace tracehealth::agent {
namespace {

TEST(CpuListTest, CountsRanges) {
  EXPECT_EQ(*ParseCpuListCount("0\n"), 1u);
  EXPECT_EQ(*ParseCpuListCount("0-1\n"), 2u);
  EXPECT_EQ(*ParseCpuListCount("0-3,8-11"), 8u);
  EXPECT_EQ(*ParseCpuListCount("0-255\n"), 256u);
  EXPECT_EQ(*ParseCpuListCount("0,2,4-5"), 4u);
}

TEST(CpuListTest, RejectsMalformed) {
  for (const char* bad : {"", "\n", "a", "3-1", "0-", "-3", "0,,1", "0-3,2",
                          "+1", "0-4294967295", "1 2"}) {
    EXPECT_FALSE(ParseCpuListCount(bad).ok()) << bad;
  }
}

TEST(CpuInfoTest, ReadsFlagsAndModel) {
  auto r = ParseCpuInfo(
      "processor\t: 0\n"
      "vendor_id\t: AuthenticAMD\n"
      "model name\t: AMD EPYC 9654 96-Core Processor\n"
      "flags\t\t: fpu vme de pse tsc invlpgb rdpru\n"
      "\n"
      "processor\t: 1\n"
      "model name\t: AMD EPYC 9654 96-Core Processor\n"
      "flags\t\t: fpu vme\n");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->invlpgb);
  EXPECT_FALSE(r->hypervisor);
  EXPECT_EQ(*r->model_name, "AMD EPYC 9654 96-Core Processor");
}

TEST(CpuInfoTest, HypervisorFlagOfAGuest) {
  // A QEMU TCG guest: x86 sets X86_FEATURE_HYPERVISOR ("hypervisor").
  auto r = ParseCpuInfo(
      "processor\t: 0\nmodel name\t: QEMU TCG CPU version 2.5+\n"
      "flags\t\t: fpu de pse tsc msr pae mce cx8 apic sep pge cmov "
      "hypervisor lahf_lm\n");
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->hypervisor);
  EXPECT_EQ(*r->model_name, "QEMU TCG CPU version 2.5+");
  // A flag that only starts alike is not it.
  r = ParseCpuInfo("processor\t: 0\nflags\t\t: fpu hypervisorx\n");
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->hypervisor);
}

TEST(CpuInfoTest, NoInvlpgb) {
  auto r = ParseCpuInfo(
      "processor\t: 0\nmodel name\t: Intel(R) Xeon(R)\nflags\t\t: fpu "
      "invlpgbx pge\n");
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->invlpgb);
}

TEST(CpuInfoTest, RejectsWithoutFlags) {
  EXPECT_FALSE(ParseCpuInfo("processor\t: 0\nmodel name\t: X\n").ok());
  EXPECT_FALSE(ParseCpuInfo("").ok());
}

}  // namespace
}  // namespace tracehealth::agent
