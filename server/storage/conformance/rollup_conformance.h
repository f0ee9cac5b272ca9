// The hourly rollup contract every ReportStore backend keeps, as tests
// (tests only): ReportStore::RollUp folds the complete hours past the
// stored watermark from full reports and heartbeats (min/max/last worked out
// by hand), absent columns stay absent, a rerun writes nothing twice, a late
// report leaves its rolled hour as it was, the watermark survives a reopen,
// and the retention of reports and of rollups each keep their side of the
// cutoff.
//
// A backend's test instantiates the suite with a way to open fresh stores:
//
//   INSTANTIATE_TEST_SUITE_P(
//       Sqlite, RollupConformance,
//       ::testing::Values(RollupBackend{"sqlite", OpenSqlite}),
//       RollupBackendName);
//
// and links //server/storage/conformance:rollup_conformance.
#ifndef TRACEHEALTH_SERVER_STORAGE_CONFORMANCE_ROLLUP_CONFORMANCE_H_
#define TRACEHEALTH_SERVER_STORAGE_CONFORMANCE_ROLLUP_CONFORMANCE_H_

#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "server/storage/report_store.h"

namespace tracehealth::server {

// A store opened for one test.
struct OpenedRollupStore {
  std::unique_ptr<ReportStore> store;  // new and empty; heartbeats on (6 h)
  // Another store on the same database (the test closes `store` first).
  std::function<absl::StatusOr<std::unique_ptr<ReportStore>>()> reopen;
};

struct RollupBackend {
  std::string name;  // the test name suffix: letters, digits and '_'
  // A different new, empty store on each call.
  std::function<absl::StatusOr<OpenedRollupStore>()> open;
};

void PrintTo(const RollupBackend& backend, std::ostream* os);
std::string RollupBackendName(
    const ::testing::TestParamInfo<RollupBackend>& info);

class RollupConformance : public ::testing::TestWithParam<RollupBackend> {
 protected:
  // A new store; a failure to open fails the test (and gives an empty one).
  OpenedRollupStore Open();
};

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_STORAGE_CONFORMANCE_ROLLUP_CONFORMANCE_H_
