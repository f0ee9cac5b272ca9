#include "agent/calibrate/host_pricing.h"

#include "absl/time/time.h"
#include "agent/calibrate/calibration_store.h"
#include "agent/testing/test_tree.h"
#include "common/procfs/host_fs.h"
#include "common/proto_time.h"
#include "gtest/gtest.h"

namespace tracehealth::agent {
namespace {

class HostPricingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tree_.Write("/proc/sys/kernel/osrelease", "6.1.0-28-amd64\n");
    state_ = tree_.root() + "/state";
    tree_.Write("/state/.keep", "");
  }
  void Save(const std::string& release, double c_visit) {
    v1::Calibration c;
    c.set_c_visit_seconds(c_visit);
    c.set_fixed_seconds(2e-3);
    c.set_kernel_release(release);
    *c.mutable_measured_at() = ToProto(absl::FromUnixSeconds(1796139600));
    ASSERT_TRUE(SaveCalibration(state_, c).ok());
  }
  TestTree tree_;
  std::string state_;
};

TEST_F(HostPricingTest, WithoutACalibrationTheSeedDefault) {
  HostFs fs(tree_.root());
  std::string warning = "stale";
  HostPricing p =
      LoadHostPricing(fs, state_, &FeatureTable::Builtin(), &warning);
  EXPECT_EQ(warning, "");
  EXPECT_FALSE(p.calibration.has_value());
  ModelOptions o = HostModelOptions(p);
  EXPECT_EQ(o.features, &FeatureTable::Builtin());
  EXPECT_FALSE(o.calibration.has_value());
  EXPECT_EQ(OriginOf(o), ConstantsOrigin::kSeedDefault);
  // No state directory: nothing read.
  p = LoadHostPricing(fs, "", &FeatureTable::Builtin(), &warning);
  EXPECT_FALSE(p.calibration.has_value());
}

TEST_F(HostPricingTest, ThisHostsCalibrationOnItsReleaseFamily) {
  // Measured on another build of the same family (6.1): used.
  Save("6.1.0-27-cloud-amd64", 120e-9);
  HostFs fs(tree_.root());
  std::string warning;
  ModelOptions o = HostModelOptions(
      LoadHostPricing(fs, state_, &FeatureTable::Builtin(), &warning));
  EXPECT_EQ(warning, "");
  ASSERT_TRUE(o.calibration.has_value());
  EXPECT_DOUBLE_EQ(o.calibration->c_visit_seconds, 120e-9);
  EXPECT_DOUBLE_EQ(o.calibration->fixed_seconds, 2e-3);
  EXPECT_EQ(o.calibration->source,
            "this host's calibration 2026-12-01T15:40:00Z");
  EXPECT_EQ(OriginOf(o), ConstantsOrigin::kHostCalibration);
}

TEST_F(HostPricingTest, ACalibrationOfAnotherReleaseIsNotUsed) {
  Save("6.12.9-amd64", 120e-9);
  HostFs fs(tree_.root());
  std::string warning;
  HostPricing p =
      LoadHostPricing(fs, state_, &FeatureTable::Builtin(), &warning);
  EXPECT_FALSE(p.calibration.has_value());
  EXPECT_EQ(warning,
            "calibration not used: it was measured on 6.12.9-amd64, this host "
            "runs 6.1.0-28-amd64");
  EXPECT_EQ(OriginOf(HostModelOptions(p)), ConstantsOrigin::kSeedDefault);
}

TEST_F(HostPricingTest, OwnCalibrationThenClassThenSeedAndAWhatIfOverAll) {
  CalibratedConstants cls;
  cls.c_visit_seconds = 400e-9;
  cls.source = "3 canaries of class X";
  HostPricing p;
  p.class_constants = cls;
  ModelOptions o = HostModelOptions(p);
  ASSERT_TRUE(o.calibration.has_value());
  EXPECT_DOUBLE_EQ(o.calibration->c_visit_seconds, 400e-9);
  EXPECT_EQ(OriginOf(o), ConstantsOrigin::kClassCalibration);
  p.calibration.emplace();
  p.calibration->set_c_visit_seconds(120e-9);
  o = HostModelOptions(p);
  EXPECT_DOUBLE_EQ(o.calibration->c_visit_seconds, 120e-9);
  EXPECT_EQ(OriginOf(o), ConstantsOrigin::kHostCalibration);
  p.c_visit_seconds = 90e-9;
  o = HostModelOptions(p);
  EXPECT_EQ(OriginOf(o), ConstantsOrigin::kWhatIf);
  EXPECT_DOUBLE_EQ(*o.c_visit_seconds, 90e-9);
}

}  // namespace
}  // namespace tracehealth::agent
