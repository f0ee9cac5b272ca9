// The contract every ReportStore backend keeps, as tests (tests only).
//
// A backend's test instantiates the suite with a way to open fresh stores:
//
//   INSTANTIATE_TEST_SUITE_P(
//       Sqlite, ReportStoreConformance,
//       ::testing::Values(ReportStoreBackend{"sqlite", OpenSqliteStore}),
//       ReportStoreBackendName);
//
// and links //server/storage/conformance:report_store_conformance. What a
// backend does beyond the contract (schemas, logs, caches) is tested beside
// the backend.
#ifndef TRACEHEALTH_SERVER_STORAGE_CONFORMANCE_REPORT_STORE_CONFORMANCE_H_
#define TRACEHEALTH_SERVER_STORAGE_CONFORMANCE_REPORT_STORE_CONFORMANCE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "server/storage/report_store.h"

namespace tracehealth::server {

// A store opened for one test.
struct OpenedReportStore {
  std::unique_ptr<ReportStore> store;  // new and empty
  // Optional (tests that need it are skipped without it): from now on,
  // inserting `seq` of `host_id` into `store` fails inside the transaction,
  // after the rows before it in its batch were inserted, as a full disk or
  // a broken constraint would.
  std::function<void(const std::string& host_id, uint64_t seq)> refuse_insert;
  // Undoes refuse_insert.
  std::function<void()> allow_inserts;
};

struct ReportStoreBackend {
  std::string name;  // the test name suffix: letters, digits and '_'
  // A different new, empty store on each call.
  std::function<absl::StatusOr<OpenedReportStore>()> open;
};

// Test names and gtest's messages show the backend by name.
void PrintTo(const ReportStoreBackend& backend, std::ostream* os);
std::string ReportStoreBackendName(
    const ::testing::TestParamInfo<ReportStoreBackend>& info);

class ReportStoreConformance
    : public ::testing::TestWithParam<ReportStoreBackend> {
 protected:
  void SetUp() override;

  ReportStore& store() { return *opened_.store; }

  OpenedReportStore opened_;
};

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_STORAGE_CONFORMANCE_REPORT_STORE_CONFORMANCE_H_
