// The heartbeat contract every ReportStore backend keeps, as tests (tests
// only): a report whose material content equals its host's stored full
// report is stored as a heartbeat (server/storage/heartbeat_policy.h), a
// replay stores nothing twice, a material change and the interval store a
// report whole, reads (GetReport, ReadHostHistory, LoadLatest) give the same
// answers as with every report whole, and retention keeps what a host's
// newest seq needs.
//
// A backend's test instantiates the suite with a way to open fresh stores:
//
//   INSTANTIATE_TEST_SUITE_P(
//       Sqlite, HeartbeatConformance,
//       ::testing::Values(HeartbeatBackend{"sqlite", OpenSqlite}),
//       HeartbeatBackendName);
//
// and links //server/storage/conformance:heartbeat_conformance. Rows are
// made by the ingest path (MakeReportRow) from realistic reports.
#ifndef TRACEHEALTH_SERVER_STORAGE_CONFORMANCE_HEARTBEAT_CONFORMANCE_H_
#define TRACEHEALTH_SERVER_STORAGE_CONFORMANCE_HEARTBEAT_CONFORMANCE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "proto/tracehealth/v1/report.pb.h"
#include "server/storage/report_store.h"

namespace tracehealth::server {

// The suite's reports, for a backend's own heartbeat tests too: report
// `seq` of host "h", observed at kHeartbeatStart + 15 s * seq + (seq % 3) ms,
// threads wandering by a few (within the material tolerance).
inline const absl::Time kHeartbeatStart = absl::FromUnixSeconds(1800000000);
v1::HostReport HeartbeatReport(uint64_t seq,
                               const std::string& release = "6.16.3");
// Its ingest row (MakeReportRow), received 2-6 ms after the observation.
ReportRow HeartbeatRow(const v1::HostReport& r);

// A store opened for one test.
struct OpenedHeartbeatStore {
  std::unique_ptr<ReportStore> store;  // new and empty
  // Reports stored whole (rows of its reports table).
  std::function<int64_t()> full_reports;
  // Heartbeat chunks stored (rows of its heartbeats table).
  std::function<int64_t()> chunks;
  // Optional (the test that needs it is skipped without it): another store
  // on the same database, open at the same time, as a second replica.
  std::function<absl::StatusOr<std::unique_ptr<ReportStore>>()> another;
};

struct HeartbeatBackend {
  std::string name;  // the test name suffix: letters, digits and '_'
  // A different new, empty store on each call, storing a full report of a
  // host at least every `full_report_interval` (zero: every report whole).
  std::function<absl::StatusOr<OpenedHeartbeatStore>(
      absl::Duration full_report_interval)>
      open;
};

void PrintTo(const HeartbeatBackend& backend, std::ostream* os);
std::string HeartbeatBackendName(
    const ::testing::TestParamInfo<HeartbeatBackend>& info);

class HeartbeatConformance : public ::testing::TestWithParam<HeartbeatBackend> {
 protected:
  // A new store; a failure to open fails the test (and gives an empty one).
  OpenedHeartbeatStore Open(absl::Duration full_report_interval);
};

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_STORAGE_CONFORMANCE_HEARTBEAT_CONFORMANCE_H_
