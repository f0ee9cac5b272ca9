// The SQLite store's schema and its versioned migrations.
//
// Table schema_version records the version of a file; Migrate applies every
// migration newer than it, in order, each in its own transaction, so a
// failure leaves the file at the last version that completed. Released
// migrations are never edited; a change appends one.
//
// Thread safety: the functions use only the connection passed in, which
// the caller serializes.
#ifndef TRACEHEALTH_SERVER_STORAGE_SQLITE_MIGRATIONS_H_
#define TRACEHEALTH_SERVER_STORAGE_SQLITE_MIGRATIONS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

struct sqlite3;

namespace tracehealth::server {

// The newest schema version this code knows.
int LatestSchemaVersion();

// The version of the open file (0 for a new one); creates schema_version
// when absent.
absl::StatusOr<int> ReadSchemaVersion(sqlite3* db);

// Brings the file to version `target` (at most LatestSchemaVersion()).
// Errors: FailedPrecondition when the file is newer than this code; the
// failing migration's error, annotated with its version.
absl::Status Migrate(sqlite3* db, int target);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_STORAGE_SQLITE_MIGRATIONS_H_
