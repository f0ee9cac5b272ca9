// Connections to the SQLite store and the error mapping every part of the
// backend shares.
//
// Thread safety: the functions are thread-safe; a connection they return
// is not (SQLITE_OPEN_NOMUTEX): its user serializes calls on it.
#ifndef TRACEHEALTH_SERVER_STORAGE_SQLITE_CONNECTION_H_
#define TRACEHEALTH_SERVER_STORAGE_SQLITE_CONNECTION_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

struct sqlite3;

namespace tracehealth::server {

// Opens (creating if needed) the database file at `path` for reading and
// writing, with a 10 s busy timeout. The caller closes it (sqlite3_close).
absl::StatusOr<sqlite3*> OpenConnection(const std::string& path);

// The last error on `db` as a Status: "<what>: <sqlite message>", coded
// ResourceExhausted (disk full), PermissionDenied (cannot open, read-only),
// DataLoss (not a database, corrupt), AlreadyExists (constraint) or
// Internal.
absl::Status SqliteError(sqlite3* db, absl::string_view what);

// Runs `sql` (one or more statements, no results). Internal on failure.
absl::Status Exec(sqlite3* db, const char* sql);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_STORAGE_SQLITE_CONNECTION_H_
