// ReadHostHistory of a SQLite store: a host's full reports (a scan of the
// reports table, which has no index by host) merged with its heartbeats
// (heartbeats.h), ordered by observation time then seq, thinned to every
// k-th as ReportStore::ReadHostHistory says. A heartbeat's row carries its
// own seq, times, threads and prediction columns, and its full report's
// risk and blob (ReportRow::heartbeat).
//
// Thread safety: uses only the connection passed in, which the caller
// serializes.
#ifndef TRACEHEALTH_SERVER_STORAGE_SQLITE_HISTORY_H_
#define TRACEHEALTH_SERVER_STORAGE_SQLITE_HISTORY_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "server/storage/report_store.h"

struct sqlite3;

namespace tracehealth::server {

// `max_rows` >= 1.
absl::StatusOr<HistoryRows> ReadHistory(sqlite3* db, const std::string& host_id,
                                        int64_t from_ns, int64_t to_ns,
                                        size_t max_rows);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_STORAGE_SQLITE_HISTORY_H_
