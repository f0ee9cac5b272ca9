#include "agent/calibrate/calibration_store.h"

#include <fstream>

#include "absl/time/time.h"
#include "agent/testing/test_tmp.h"
#include "common/models/calibrated_constants.h"
#include "common/proto_time.h"
#include "gtest/gtest.h"

namespace tracehealth::agent {
namespace {

TEST(CalibrationStoreTest, SaveLoadAndTheModelsConstants) {
  const std::string dir = TestTempDir("cal");
  EXPECT_FALSE(LoadCalibration(dir)->has_value());
  v1::Calibration c;
  c.set_c_visit_seconds(120.5e-9);
  c.set_fixed_seconds(40e-6);
  c.set_threads(9000);
  c.set_kernel_release("6.1.0-28-cloud-amd64");
  // 2026-12-01 15:40:00 UTC: 20,788 days after 1970-01-01 (56 years, 14
  // of them leap, plus 334 days to December 1st) = 1,796,083,200 s,
  // + 15 h 40 min = 56,400 s.
  *c.mutable_measured_at() = ToProto(absl::FromUnixSeconds(1796139600));
  ASSERT_TRUE(SaveCalibration(dir, c).ok());
  absl::StatusOr<std::optional<v1::Calibration>> back = LoadCalibration(dir);
  ASSERT_TRUE(back.ok() && back->has_value()) << back.status();
  EXPECT_EQ((*back)->threads(), 9000u);
  // What the models take from it (the one converter, common/models/
  // calibrated_constants.h).
  CalibratedConstants k = ConstantsOf(**back);
  EXPECT_EQ(k.origin, ConstantsOrigin::kHostCalibration);
  EXPECT_DOUBLE_EQ(k.c_visit_seconds, 120.5e-9);
  EXPECT_DOUBLE_EQ(k.fixed_seconds, 40e-6);
  EXPECT_EQ(k.source, "this host's calibration 2026-12-01T15:40:00Z");
  EXPECT_NE(CalibrationJson(c).find("\"c_visit_seconds\":1.205e-07"),
            std::string::npos)
      << CalibrationJson(c);
}

TEST(CalibrationStoreTest, RefusesABadFile) {
  const std::string dir = TestTempDir("cal");
  std::ofstream(dir + "/calibration.json") << "{\"c_visit_seconds\": 0}";
  absl::StatusOr<std::optional<v1::Calibration>> c = LoadCalibration(dir);
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(c.status().message().find("c_visit_seconds must be positive"),
            absl::string_view::npos);
  std::ofstream(dir + "/calibration.json", std::ios::trunc) << "garbage";
  EXPECT_EQ(LoadCalibration(dir).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tracehealth::agent
