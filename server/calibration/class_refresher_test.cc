#include "server/calibration/class_refresher.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/proto_time.h"
#include "gtest/gtest.h"
#include "server/storage/sqlite/sqlite_storage.h"
#include "tests/util/subprocess.h"

namespace tracehealth::server {
namespace {

constexpr char kClass[] = "QEMU TCG CPU version 2.5+ / 6.1";

// A calibration of `host` as CalibrationIntake stores it.
CalibrationRow Row(const std::string& host, int64_t at_s, double c_visit) {
  v1::Calibration c;
  c.set_host_id(host);
  c.set_hardware_class(kClass);
  *c.mutable_measured_at() = ToProto(absl::FromUnixSeconds(at_s));
  c.set_c_visit_seconds(c_visit);
  c.set_fixed_seconds(1e-3);
  return CalibrationRowOf(c, absl::FromUnixSeconds(1));
}

class ClassRefresherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = SqliteStorage::Open(testing::NewTempDir("refresher") + "/db");
    ASSERT_TRUE(s.ok()) << s.status();
    store_ = *std::move(s);
  }
  void Put(const CalibrationRow& row) {
    absl::StatusOr<bool> put = store_->PutCalibration(row);
    ASSERT_TRUE(put.ok()) << put.status();
  }
  std::unique_ptr<SqliteStorage> store_;
  ClassCalibrations classes_;
  std::vector<std::string> log_;
};

TEST_F(ClassRefresherTest, TakesWhatWasStoredSinceAndLogsAFailureOnce) {
  ClassRefresher refresher(
      store_.get(), &classes_, absl::Hours(1),
      [this](const std::string& line) { log_.push_back(line); });
  ASSERT_NO_FATAL_FAILURE(Put(Row("a", 100, 100e-9)));
  ASSERT_TRUE(refresher.RefreshOnce().ok());
  EXPECT_DOUBLE_EQ(classes_.Of(kClass)->c_visit_median, 100e-9);
  const uint64_t version = classes_.version();
  ASSERT_TRUE(refresher.RefreshOnce().ok());
  EXPECT_EQ(classes_.version(), version);

  // Stored elsewhere: "b" at 300 ns. Median of 100 and 300 ns.
  ASSERT_NO_FATAL_FAILURE(Put(Row("b", 100, 300e-9)));
  ASSERT_TRUE(refresher.RefreshOnce().ok());
  EXPECT_DOUBLE_EQ(classes_.Of(kClass)->c_visit_median, 200e-9);
  EXPECT_EQ(classes_.Of(kClass)->calibrations, 2u);
  EXPECT_TRUE(log_.empty());

  // A blob that does not parse: DataLoss naming the host, logged once over
  // two loads; the rest stays loaded.
  CalibrationRow bad = Row("c", 100, 500e-9);
  bad.blob = "\xff\xff";
  ASSERT_NO_FATAL_FAILURE(Put(bad));
  absl::Status st = refresher.RefreshOnce();
  EXPECT_TRUE(absl::IsDataLoss(st)) << st;
  EXPECT_EQ(st.message(), "calibration of host c does not parse");
  EXPECT_TRUE(absl::IsDataLoss(refresher.RefreshOnce()));
  ASSERT_EQ(log_.size(), 1u);
  EXPECT_EQ(log_[0],
            "calibrations: DATA_LOSS: calibration of host c does not parse");
  EXPECT_EQ(classes_.Of(kClass)->calibrations, 2u);
  EXPECT_EQ(refresher.refreshes(), 5u);
}

TEST_F(ClassRefresherTest, ItsThreadLoadsEveryInterval) {
  ClassRefresher refresher(store_.get(), &classes_, absl::Milliseconds(10),
                           [](const std::string&) {});
  refresher.Start();
  ASSERT_NO_FATAL_FAILURE(Put(Row("a", 100, 100e-9)));
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (!classes_.Of(kClass).has_value() && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  ASSERT_TRUE(classes_.Of(kClass).has_value());
  refresher.Stop();
  const uint64_t n = refresher.refreshes();
  EXPECT_GE(n, 1u);
  absl::SleepFor(absl::Milliseconds(50));
  EXPECT_EQ(refresher.refreshes(), n) << "loads after Stop";
}

}  // namespace
}  // namespace tracehealth::server
