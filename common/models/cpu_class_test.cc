#include "common/models/cpu_class.h"

#include "gtest/gtest.h"

namespace tracehealth {
namespace {

v1::CpuInfo Cpu(const char* model, std::optional<bool> hypervisor = false) {
  v1::CpuInfo c;
  if (*model) c.set_model_name(model);
  if (hypervisor) c.set_hypervisor(*hypervisor);
  return c;
}

TEST(CpuClassTest, SapphireRapidsNames) {
  // 4th generation Xeon Scalable: the second digit of the number is 4.
  EXPECT_TRUE(IsSapphireRapids("Intel(R) Xeon(R) Platinum 8480+"));
  EXPECT_TRUE(IsSapphireRapids("Intel(R) Xeon(R) Platinum 8490H"));
  EXPECT_TRUE(IsSapphireRapids("Intel(R) Xeon(R) Gold 6430"));
  EXPECT_TRUE(IsSapphireRapids("Intel(R) Xeon(R) Silver 4410Y"));
  // Emerald Rapids (5th), Ice Lake (3rd), AMD.
  EXPECT_FALSE(IsSapphireRapids("Intel(R) Xeon(R) Platinum 8592+"));
  EXPECT_FALSE(IsSapphireRapids("Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz"));
  EXPECT_FALSE(IsSapphireRapids("AMD EPYC 9654 96-Core Processor"));
  EXPECT_FALSE(IsSapphireRapids("Intel(R) Xeon(R) Platinum 84801"));
}

TEST(CpuClassTest, Classes) {
  // The QEMU TCG guest whose visits cost 4.6-7.5x the fit.
  EXPECT_EQ(ClassifyCpu(Cpu("QEMU TCG CPU version 2.5+", true), true),
            v1::CPU_CLASS_EMULATED);
  EXPECT_EQ(ClassifyCpu(Cpu("Intel(R) Xeon(R) Platinum 8480+", true), true),
            v1::CPU_CLASS_VIRTUALIZED);
  EXPECT_EQ(ClassifyCpu(Cpu("Intel(R) Xeon(R) Platinum 8480+"), true),
            v1::CPU_CLASS_FITTED);
  // The same CPU against a constant fitted on another (unnamed) host.
  EXPECT_EQ(ClassifyCpu(Cpu("Intel(R) Xeon(R) Platinum 8480+"), false),
            v1::CPU_CLASS_OTHER);
  EXPECT_EQ(ClassifyCpu(Cpu("AMD EPYC 7R13 Processor"), true),
            v1::CPU_CLASS_OTHER);
  // The flag unread is not a guest.
  EXPECT_EQ(ClassifyCpu(Cpu("AMD EPYC 7R13 Processor", std::nullopt), true),
            v1::CPU_CLASS_OTHER);
  EXPECT_EQ(ClassifyCpu(Cpu(""), true), v1::CPU_CLASS_UNKNOWN);
}

TEST(CpuClassTest, ConfidenceLoss) {
  EXPECT_DOUBLE_EQ(CpuClassConfidenceLoss(v1::CPU_CLASS_FITTED), 0);
  EXPECT_DOUBLE_EQ(CpuClassConfidenceLoss(v1::CPU_CLASS_OTHER), 0.1);
  EXPECT_DOUBLE_EQ(CpuClassConfidenceLoss(v1::CPU_CLASS_VIRTUALIZED), 0.2);
  EXPECT_DOUBLE_EQ(CpuClassConfidenceLoss(v1::CPU_CLASS_EMULATED), 0.4);
}

}  // namespace
}  // namespace tracehealth
