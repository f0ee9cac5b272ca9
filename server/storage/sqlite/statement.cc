#include "server/storage/sqlite/statement.h"

#include "absl/strings/str_cat.h"
#include "server/storage/sqlite/connection.h"

namespace tracehealth::server {

absl::StatusOr<std::unique_ptr<SqliteStatement>> SqliteStatement::Prepare(
    sqlite3* db, const char* sql) {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt,
                         nullptr) != SQLITE_OK) {
    return SqliteError(db, absl::StrCat("prepare ", sql));
  }
  return std::unique_ptr<SqliteStatement>(new SqliteStatement(stmt));
}

}  // namespace tracehealth::server
