#include "server/calibration/calibration_intake.h"

#include <limits>
#include <memory>

#include "absl/time/time.h"
#include "common/proto_time.h"
#include "gtest/gtest.h"
#include "server/storage/sqlite/sqlite_storage.h"
#include "tests/util/subprocess.h"

namespace tracehealth::server {
namespace {

v1::Calibration Good(const std::string& host, double c_visit) {
  v1::Calibration c;
  c.set_host_id(host);
  c.set_c_visit_seconds(c_visit);
  c.set_fixed_seconds(2e-3);
  c.set_cpu_model("QEMU TCG CPU version 2.5+");
  c.set_kernel_release("6.1.0-28-cloud-amd64");
  c.set_hardware_class("something the agent made up");
  *c.mutable_measured_at() = ToProto(absl::FromUnixSeconds(1796139600));
  return c;
}

class CalibrationIntakeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = SqliteStorage::Open(testing::NewTempDir("intake") + "/db");
    ASSERT_TRUE(s.ok()) << s.status();
    store_ = *std::move(s);
    intake_ = std::make_unique<CalibrationIntake>(
        store_.get(), &classes_, [] { return absl::FromUnixSeconds(1); });
  }
  absl::Status Submit(const v1::Calibration& c,
                      const std::vector<std::string>* ids = nullptr) {
    v1::SubmitCalibrationResponse r;
    absl::Status s = intake_->Submit(c, ids, &r);
    last_ = r;
    return s;
  }
  std::unique_ptr<SqliteStorage> store_;
  ClassCalibrations classes_;
  std::unique_ptr<CalibrationIntake> intake_;
  v1::SubmitCalibrationResponse last_;
};

TEST_F(CalibrationIntakeTest, StoresAndCountsInTheClass) {
  ASSERT_TRUE(Submit(Good("a", 100e-9)).ok());
  EXPECT_EQ(last_.hardware_class(), "QEMU TCG CPU version 2.5+ / 6.1");
  EXPECT_EQ(last_.class_calibrations(), 1u);
  ASSERT_TRUE(Submit(Good("b", 300e-9)).ok());
  // Median of 100 and 300 ns.
  EXPECT_DOUBLE_EQ(last_.class_c_visit_seconds(), 200e-9);
  EXPECT_DOUBLE_EQ(last_.class_fixed_seconds(), 2e-3);
  // The same calibration again: stored and counted once.
  ASSERT_TRUE(Submit(Good("b", 300e-9)).ok());
  EXPECT_EQ(last_.class_calibrations(), 2u);
  auto rows = store_->ListCalibrations();
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].hardware_class, "QEMU TCG CPU version 2.5+ / 6.1");
  EXPECT_EQ((*rows)[0].received_at_ns, 1000000000);
  // A restarted server rebuilds the class from the store.
  ClassCalibrations rebuilt;
  ASSERT_TRUE(rebuilt.LoadFrom(*store_).ok());
  EXPECT_DOUBLE_EQ(
      rebuilt.Of("QEMU TCG CPU version 2.5+ / 6.1")->c_visit_median, 200e-9);
}

TEST_F(CalibrationIntakeTest, RefusalsNameTheField) {
  struct Case {
    const char* field;
    std::function<void(v1::Calibration&)> spoil;
  };
  const Case cases[] = {
      {"host_id: ", [](v1::Calibration& c) { c.set_host_id("a b"); }},
      {"c_visit_seconds: ",
       [](v1::Calibration& c) { c.set_c_visit_seconds(0); }},
      {"c_visit_seconds: ",
       [](v1::Calibration& c) { c.set_c_visit_seconds(1.1e-3); }},
      {"c_visit_seconds: ",
       [](v1::Calibration& c) {
         c.set_c_visit_seconds(std::numeric_limits<double>::quiet_NaN());
       }},
      {"fixed_seconds: ", [](v1::Calibration& c) { c.set_fixed_seconds(-1); }},
      {"cpu_model: ", [](v1::Calibration& c) { c.clear_cpu_model(); }},
      {"kernel_release: ",
       [](v1::Calibration& c) { c.set_kernel_release("linux"); }},
      {"measured_at: ", [](v1::Calibration& c) { c.clear_measured_at(); }},
  };
  for (const Case& k : cases) {
    v1::Calibration c = Good("a", 100e-9);
    k.spoil(c);
    absl::Status s = Submit(c);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << k.field;
    EXPECT_EQ(s.message().rfind(k.field, 0), 0u) << s;
  }
  // Both sides of the c_visit bound: 1 ms is accepted.
  EXPECT_TRUE(Submit(Good("a", 1e-3)).ok());
  EXPECT_TRUE(store_->ListCalibrations()->size() == 1);
}

TEST_F(CalibrationIntakeTest, TheCertificateMustNameTheHost) {
  const std::vector<std::string> ids = {"b"};
  absl::Status s = Submit(Good("a", 100e-9), &ids);
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(s.message(), "client certificate does not name host \"a\"");
  EXPECT_TRUE(Submit(Good("b", 100e-9), &ids).ok());
}

}  // namespace
}  // namespace tracehealth::server
