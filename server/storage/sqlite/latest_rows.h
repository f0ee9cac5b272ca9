// The SQLite store's reads of each host's newest row at start and its
// retention deletes, over the reports and records tables (schema 8: each
// report's stored record in `records`, keyed by the report's id).
//
// Thread safety: none; the store calls them with the connection's lock held.
#ifndef TRACEHEALTH_SERVER_STORAGE_SQLITE_LATEST_ROWS_H_
#define TRACEHEALTH_SERVER_STORAGE_SQLITE_LATEST_ROWS_H_

#include <sqlite3.h>

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "server/storage/report_store.h"

namespace tracehealth::server {

// For each (row, report id) of `latest` (sorted here by id), reads the
// report's stored record, or the report itself when it has none, into the
// row and calls `fn` with it. A report id not found (a file edited by
// hand) is left out.
absl::Status ReadLatestRows(sqlite3* db,
                            std::vector<std::pair<LatestRow, int64_t>>& latest,
                            const std::function<void(LatestRow&)>& fn);

// Deletes, in one transaction, the reports with ids in [start, end) older
// than their host's newest (by the hosts table) and their records. Returns
// the reports deleted.
absl::StatusOr<int64_t> DeleteOldRows(sqlite3* db, int64_t start, int64_t end);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_STORAGE_SQLITE_LATEST_ROWS_H_
