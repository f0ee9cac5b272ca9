// What a SQLite store's file holds for a host, read as a test inspects it
// (its own read-only connection, while the server may be running): full
// reports (the reports table) and heartbeats (the heartbeats table,
// server/storage/sqlite/heartbeats.h).
#ifndef TRACEHEALTH_TESTS_UTIL_STORED_REPORTS_H_
#define TRACEHEALTH_TESTS_UTIL_STORED_REPORTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

struct sqlite3;

namespace tracehealth::testing {

// The seqs stored for `host_id`, whole or as heartbeats, in the order they
// were received (a duplicate appears twice).
absl::StatusOr<std::vector<uint64_t>> StoredSeqsIn(sqlite3* db,
                                                   const std::string& host_id);

// The stored report (host_id, seq): a heartbeat's is rebuilt from its full
// report as the store does. NotFound when there is none.
absl::StatusOr<std::string> StoredReportIn(sqlite3* db,
                                           const std::string& host_id,
                                           uint64_t seq);

}  // namespace tracehealth::testing

#endif  // TRACEHEALTH_TESTS_UTIL_STORED_REPORTS_H_
