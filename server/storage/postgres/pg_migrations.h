// Versioned schema of the PostgreSQL store, applied at start.
//
// Migrations run one transaction each under a transaction-scoped advisory
// lock, so replicas starting together migrate once (and the lock works
// through a transaction-pooling proxy). A database whose schema is newer
// than this code is refused.
//
// Thread safety: plain functions on a connection the caller owns.
#ifndef TRACEHEALTH_SERVER_STORAGE_POSTGRES_PG_MIGRATIONS_H_
#define TRACEHEALTH_SERVER_STORAGE_POSTGRES_PG_MIGRATIONS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "server/storage/postgres/pg_connection.h"

namespace tracehealth::server {

// The newest schema version this code knows.
int PgLatestSchemaVersion();

// The database's schema version (0: none yet).
absl::StatusOr<int> PgSchemaVersion(PgConnection& conn);

// Brings the schema to `target` (<= PgLatestSchemaVersion()). Errors:
// FailedPrecondition when the database is newer than this code; the
// failing statement's otherwise (nothing of that migration stays).
absl::Status PgMigrate(PgConnection& conn, int target);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_STORAGE_POSTGRES_PG_MIGRATIONS_H_
