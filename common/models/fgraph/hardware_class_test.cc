#include "common/models/fgraph/hardware_class.h"

#include "gtest/gtest.h"

namespace tracehealth {
namespace {

TEST(HardwareClassTest, CpuModelAndReleaseFamily) {
  EXPECT_EQ(KernelReleaseFamily("6.1.0-28-cloud-amd64"), "6.1");
  EXPECT_EQ(KernelReleaseFamily("6.16"), "6.16");
  EXPECT_EQ(KernelReleaseFamily("not-a-release"), "");
  EXPECT_EQ(HardwareClass("Intel(R) Xeon(R) CPU  E5-2690 v4 ",
                          "6.1.0-28-cloud-amd64"),
            "Intel(R) Xeon(R) CPU E5-2690 v4 / 6.1");
  // Two builds of one family share the class; another family does not.
  EXPECT_EQ(HardwareClass("QEMU Virtual CPU version 2.5+", "6.1.0-9-amd64"),
            HardwareClass("QEMU Virtual CPU version 2.5+", "6.1.119-1"));
  EXPECT_NE(HardwareClass("QEMU Virtual CPU version 2.5+", "6.1.0-9-amd64"),
            HardwareClass("QEMU Virtual CPU version 2.5+", "6.12.0-1-amd64"));
  EXPECT_EQ(HardwareClass("", "6.1.0"), "");
  EXPECT_EQ(HardwareClass("QEMU", ""), "");
}

// The answer kept for the last inputs is given for those inputs only: each
// part changed alone, then back, and an answer of "" kept too.
TEST(HardwareClassTest, EachInputsOwnAnswer) {
  for (int round = 0; round < 2; ++round) {
    EXPECT_EQ(HardwareClass("A", "6.1.0"), "A / 6.1");
    EXPECT_EQ(HardwareClass("A", "6.1.0"), "A / 6.1");
    EXPECT_EQ(HardwareClass("B", "6.1.0"), "B / 6.1");
    EXPECT_EQ(HardwareClass("B", "6.12.0"), "B / 6.12");
    EXPECT_EQ(HardwareClass("B", "x"), "");
    EXPECT_EQ(HardwareClass("B", "x"), "");
    EXPECT_EQ(HardwareClass("A", "6.1.0"), "A / 6.1");
    // One input a prefix of the last: compared whole.
    EXPECT_EQ(HardwareClass("AB", "6.1.0"), "AB / 6.1");
    EXPECT_EQ(HardwareClass("A", "6.1.0"), "A / 6.1");
  }
}

}  // namespace
}  // namespace tracehealth
