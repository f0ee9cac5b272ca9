#include "agent/parsers/arm_midr.h"

#include <utility>

#include "common/testing/refusal.h"
#include "gtest/gtest.h"

namespace tracehealth::agent {
namespace {

// Ampere Altra (Neoverse-N1 r3p1): implementer 0x41, variant 3,
// architecture 0xf, part 0xd0c, revision 1.
TEST(MidrTest, DecodesAndEncodesTheFields) {
  const MidrFields f = DecodeMidr(0x413fd0c1);
  EXPECT_EQ(f.implementer, 0x41u);
  EXPECT_EQ(f.variant, 3u);
  EXPECT_EQ(f.architecture, 0xfu);
  EXPECT_EQ(f.part, 0xd0cu);
  EXPECT_EQ(f.revision, 1u);
  EXPECT_EQ(EncodeMidr(f), 0x413fd0c1u);
  // Every field at its widest.
  EXPECT_EQ(EncodeMidr({0xff, 0xf, 0xf, 0xfff, 0xf}), 0xffffffffu);
  EXPECT_EQ(EncodeMidr({0xc0, 0, 0xf, 0xac3, 0}), 0xc00fac30u);
}

TEST(MidrTest, SameMidrIgnoresOnlyTheArchitecture) {
  EXPECT_TRUE(SameMidr(0x410fd4f1, 0x410fd4f1));
  EXPECT_TRUE(SameMidr(0x410fd4f1, 0x4108d4f1));   // cpuinfo's "8"
  EXPECT_FALSE(SameMidr(0x410fd4f1, 0x410fd4f0));  // revision
  EXPECT_FALSE(SameMidr(0x410fd4f1, 0x411fd4f1));  // variant
  EXPECT_FALSE(SameMidr(0x410fd4f1, 0x410fd401));  // part
  EXPECT_FALSE(SameMidr(0x410fd4f1, 0x420fd4f1));  // implementer
}

// The kernel's "0x%016llx\n" (arch/arm64/kernel/cpuinfo.c).
TEST(MidrTest, ParsesSysfsMidrEl1) {
  EXPECT_EQ(*ParseMidrEl1("0x00000000410fd4f1\n"), 0x410fd4f1u);
  EXPECT_EQ(*ParseMidrEl1("0x00000000413FD0C1\n"), 0x413fd0c1u);
  EXPECT_EQ(*ParseMidrEl1("0x00000000c00fac30"), 0xc00fac30u);
  EXPECT_EQ(*ParseMidrEl1("0x0"), 0u);
  // The widest accepted: 16 digits, the upper half zero.
  EXPECT_EQ(*ParseMidrEl1("0x00000000ffffffff\n"), 0xffffffffu);
}

TEST(MidrTest, RefusesMalformedMidrEl1) {
  const std::pair<const char*, const char*> cases[] = {
      {"", "midr_el1 '': empty (the kernel never read this CPU's registers)"},
      {"\n",
       "midr_el1 '\\n': empty (the kernel never read this CPU's registers)"},
      {"410fd4f1\n", "midr_el1 '410fd4f1\\n': not 0x and hex digits"},
      {"0x\n", "midr_el1 '0x\\n': not 0x and hex digits"},
      {"0x410fd4g1", "midr_el1 '0x410fd4g1': not 0x and hex digits"},
      {" 0x410fd4f1", "midr_el1 ' 0x410fd4f1': not 0x and hex digits"},
      {"0x410fd4f1\n\n", "midr_el1 '0x410fd4f1\\n\\n': not 0x and hex digits"},
      {"0x000000000410fd4f1",
       "midr_el1 '0x000000000410fd4f1': more than 64 bits"},
      {"0x00000001410fd4f1\n",
       "midr_el1 '0x00000001410fd4f1\\n': bits 63:32 are set (RES0)"},
  };
  for (const auto& [text, message] : cases) {
    SCOPED_TRACE(text);
    ExpectRefused(ParseMidrEl1(text).status(), message);
  }
}

TEST(MidrTest, NamesTheCommonServerParts) {
  const std::pair<uint32_t, const char*> cases[] = {
      {0x413fd0c1, "Neoverse-N1"},  // Ampere Altra, AWS Graviton2
      {0x411fd401, "Neoverse-V1"},  // AWS Graviton3
      {0x410fd490, "Neoverse-N2"},
      {0x410fd4f1, "Neoverse-V2"},  // AWS Graviton4, NVIDIA Grace
      {0x410fd840, "Neoverse-V3"},
      {0x410fd8e0, "Neoverse-N3"},
      {0x410fd083, "Cortex-A72"},
      {0x414fd0b1, "Cortex-A76"},
      {0xc00fac30, "Ampere-1"},  // AmpereOne
      {0xc00fac41, "Ampere-1a"},
      {0x461f0010, "A64FX"},
      {0x481fd010, "Kunpeng-920"},
      {0x431f0af1, "ThunderX2-99xx"},
  };
  for (const auto& [midr, name] : cases) {
    EXPECT_EQ(ArmCpuModelName(midr), name) << std::hex << midr;
  }
}

// A part the table does not have, of a known implementer or not, and a known
// part number under another implementer: the numbers, as the kernel prints
// them.
TEST(MidrTest, NamesOtherPartsByTheirNumbers) {
  EXPECT_EQ(ArmCpuModelName(0x410fd8f0), "implementer 0x41 part 0xd8f");
  EXPECT_EQ(ArmCpuModelName(0x6d0fd490), "implementer 0x6d part 0xd49");
  EXPECT_EQ(ArmCpuModelName(0x420fd4f1), "implementer 0x42 part 0xd4f");
  EXPECT_EQ(ArmCpuModelName(0x0), "implementer 0x00 part 0x000");
  // Variant and revision do not change the name.
  EXPECT_EQ(ArmCpuModelName(0x41ffd4ff), "Neoverse-V2");
}

}  // namespace
}  // namespace tracehealth::agent
