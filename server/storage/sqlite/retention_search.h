// Retention's search for the end of the old rows of the reports table.
//
// Thread safety: uses only the connection passed in, which the caller
// serializes.
#ifndef TRACEHEALTH_SERVER_STORAGE_SQLITE_RETENTION_SEARCH_H_
#define TRACEHEALTH_SERVER_STORAGE_SQLITE_RETENTION_SEARCH_H_

#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"

struct sqlite3;

namespace tracehealth::server {

// The first row id at or after which rows were received at or after
// `received_before_ns`; nullopt when the table is empty. Rows are appended
// in commit order, so received_at_ns grows with the id (up to the few
// milliseconds one batch spans): a binary search over ids finds the end of
// the old rows without an index. Invariant: every row below `lo` is old and
// every row at or above `hi` is not.
absl::StatusOr<std::optional<int64_t>> FindRetentionEnd(
    sqlite3* db, int64_t received_before_ns);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_STORAGE_SQLITE_RETENTION_SEARCH_H_
