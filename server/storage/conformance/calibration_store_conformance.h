// The contract every CalibrationStore backend keeps, as tests (tests only).
//
// A backend's test instantiates the suite with a way to open fresh stores:
//
//   INSTANTIATE_TEST_SUITE_P(
//       Sqlite, CalibrationStoreConformance,
//       ::testing::Values(CalibrationStoreBackend{"sqlite", Open}),
//       CalibrationStoreBackendName);
//
// and links //server/storage/conformance:calibration_store_conformance.
#ifndef TRACEHEALTH_SERVER_STORAGE_CONFORMANCE_CALIBRATION_STORE_CONFORMANCE_H_
#define TRACEHEALTH_SERVER_STORAGE_CONFORMANCE_CALIBRATION_STORE_CONFORMANCE_H_

#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "server/storage/calibration_store.h"

namespace tracehealth::server {

struct CalibrationStoreBackend {
  std::string name;  // the test name suffix: letters, digits and '_'
  // A different new, empty store on each call.
  std::function<absl::StatusOr<std::unique_ptr<CalibrationStore>>()> open;
};

void PrintTo(const CalibrationStoreBackend& backend, std::ostream* os);
std::string CalibrationStoreBackendName(
    const ::testing::TestParamInfo<CalibrationStoreBackend>& info);

class CalibrationStoreConformance
    : public ::testing::TestWithParam<CalibrationStoreBackend> {
 protected:
  void SetUp() override;

  CalibrationStore& store() { return *store_; }

  std::unique_ptr<CalibrationStore> store_;
};

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_STORAGE_CONFORMANCE_CALIBRATION_STORE_CONFORMANCE_H_
