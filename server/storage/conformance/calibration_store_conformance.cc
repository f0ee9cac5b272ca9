#include "server/storage/conformance/calibration_store_conformance.h"

#include <string>
#include <utility>
#include <vector>

namespace tracehealth::server {

void PrintTo(const CalibrationStoreBackend& backend, std::ostream* os) {
  *os << backend.name;
}

std::string CalibrationStoreBackendName(
    const ::testing::TestParamInfo<CalibrationStoreBackend>& info) {
  return info.param.name;
}

void CalibrationStoreConformance::SetUp() {
  absl::StatusOr<std::unique_ptr<CalibrationStore>> store = GetParam().open();
  ASSERT_TRUE(store.ok()) << store.status();
  ASSERT_NE(*store, nullptr);
  store_ = *std::move(store);
}

namespace {

CalibrationRow Row(const std::string& host, int64_t measured_at_ns,
                   double c_visit) {
  CalibrationRow r;
  r.host_id = host;
  r.hardware_class = "QEMU TCG CPU version 2.5+ / 6.1";
  r.measured_at_ns = measured_at_ns;
  r.c_visit_seconds = c_visit;
  r.fixed_seconds = 1.5e-4;
  r.received_at_ns = measured_at_ns + 7;
  // Bytes that are no text: a blob must come back byte for byte.
  r.blob = std::string("\x0a\x00\xff", 3) + host;
  return r;
}

TEST_P(CalibrationStoreConformance, StoresEachCalibrationOnce) {
  absl::StatusOr<std::vector<CalibrationRow>> none = store().ListCalibrations();
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_TRUE(none->empty());
  ASSERT_TRUE(*store().PutCalibration(Row("b", 200, 3.25e-7)));
  ASSERT_TRUE(*store().PutCalibration(Row("a", 200, 1.5e-7)));
  ASSERT_TRUE(*store().PutCalibration(Row("a", 100, 9.0e-8)));
  // The same (host, measured at) again: kept as first stored.
  absl::StatusOr<bool> again = store().PutCalibration(Row("a", 100, 5e-8));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_FALSE(*again);
  absl::StatusOr<std::vector<CalibrationRow>> rows = store().ListCalibrations();
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 3u);
  // Oldest measured first, ties by host.
  EXPECT_EQ((*rows)[0].host_id, "a");
  EXPECT_EQ((*rows)[0].measured_at_ns, 100);
  EXPECT_EQ((*rows)[0].c_visit_seconds, 9.0e-8);
  EXPECT_EQ((*rows)[1].host_id, "a");
  EXPECT_EQ((*rows)[1].measured_at_ns, 200);
  EXPECT_EQ((*rows)[2].host_id, "b");
  EXPECT_EQ((*rows)[2].c_visit_seconds, 3.25e-7);
  EXPECT_EQ((*rows)[2].fixed_seconds, 1.5e-4);
  EXPECT_EQ((*rows)[2].received_at_ns, 207);
  EXPECT_EQ((*rows)[2].hardware_class, "QEMU TCG CPU version 2.5+ / 6.1");
  EXPECT_EQ((*rows)[2].blob, std::string("\x0a\x00\xff", 3) + "b");
}

}  // namespace
}  // namespace tracehealth::server
