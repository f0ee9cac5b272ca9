// The contract every AlertStore backend keeps, as tests (tests only).
//
// A backend's test instantiates the suite with a way to open fresh stores:
//
//   INSTANTIATE_TEST_SUITE_P(
//       Sqlite, AlertStoreConformance,
//       ::testing::Values(AlertStoreBackend{"sqlite", OpenSqliteAlerts}),
//       AlertStoreBackendName);
//
// and links //server/storage/conformance:alert_store_conformance.
#ifndef TRACEHEALTH_SERVER_STORAGE_CONFORMANCE_ALERT_STORE_CONFORMANCE_H_
#define TRACEHEALTH_SERVER_STORAGE_CONFORMANCE_ALERT_STORE_CONFORMANCE_H_

#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "server/storage/alert_store.h"

namespace tracehealth::server {

struct AlertStoreBackend {
  std::string name;  // the test name suffix: letters, digits and '_'
  // A different new, empty store on each call.
  std::function<absl::StatusOr<std::unique_ptr<AlertStore>>()> open;
};

// Test names and gtest's messages show the backend by name.
void PrintTo(const AlertStoreBackend& backend, std::ostream* os);
std::string AlertStoreBackendName(
    const ::testing::TestParamInfo<AlertStoreBackend>& info);

class AlertStoreConformance
    : public ::testing::TestWithParam<AlertStoreBackend> {
 protected:
  void SetUp() override;

  AlertStore& store() { return *store_; }

  std::unique_ptr<AlertStore> store_;
};

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_STORAGE_CONFORMANCE_ALERT_STORE_CONFORMANCE_H_
