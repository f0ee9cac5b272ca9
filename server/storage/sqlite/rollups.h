// Hourly rollups in the SQLite store (schema 10; RollupRow, report_store.h;
// arithmetic server/storage/rollup.h): the rollups table, one row per
// (host, hour) keyed by (host_id, hour_start_ns) and indexed by hour (for
// their retention), and rollup_state, the one-row watermark (every hour
// before rolled_through_ns is rolled up).
//
// A pass (SqliteStorage::RollUp) reads the reports and heartbeat chunks
// observed in its hours on the read connection (FoldStoredHours: a scan of
// the reports table, which has no index by time, and of the heartbeats
// table), then writes the rows and moves the watermark in one transaction on
// the write connection (WriteRollups), only if the watermark is still the
// one the pass started from.
//
// Thread safety: the functions use only the connection passed in, which the
// caller serializes.
#ifndef TRACEHEALTH_SERVER_STORAGE_SQLITE_ROLLUPS_H_
#define TRACEHEALTH_SERVER_STORAGE_SQLITE_ROLLUPS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "server/storage/report_store.h"
#include "server/storage/rollup.h"

struct sqlite3;

namespace tracehealth::server {

// The stored watermark; nullopt when none was stored yet.
absl::StatusOr<std::optional<int64_t>> ReadRollupWatermark(sqlite3* db);

// The oldest observation time stored (reports and heartbeats); nullopt when
// nothing is stored.
absl::StatusOr<std::optional<int64_t>> OldestObservation(sqlite3* db);

// Adds to `folder` every full report and heartbeat observed in
// [from_ns, to_ns): a full report's threads from its report, a heartbeat's
// risk from its full report (as ReadHostHistory gives them).
absl::Status FoldStoredHours(sqlite3* db, int64_t from_ns, int64_t to_ns,
                             RollupFolder* folder);

// One transaction: Aborted (nothing written) unless the watermark is still
// `expected`; otherwise inserts `rows` (replacing any of the same host and
// hour) and sets the watermark to `rolled_through_ns`.
absl::Status WriteRollups(sqlite3* db, std::optional<int64_t> expected,
                          int64_t rolled_through_ns,
                          const std::vector<RollupRow>& rows);

// ReportStore::ReadHostRollups.
absl::StatusOr<std::vector<RollupRow>> ReadRollups(sqlite3* db,
                                                   const std::string& host_id,
                                                   int64_t from_ns,
                                                   int64_t to_ns);

// ReportStore::DeleteRollupsBefore.
absl::StatusOr<int64_t> DeleteRollups(sqlite3* db, int64_t hour_before_ns);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_STORAGE_SQLITE_ROLLUPS_H_
