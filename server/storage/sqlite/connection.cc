#include "server/storage/sqlite/connection.h"

#include <sqlite3.h>

#include "absl/strings/str_cat.h"

namespace tracehealth::server {

absl::Status SqliteError(sqlite3* db, absl::string_view what) {
  int code = sqlite3_errcode(db);
  std::string msg = absl::StrCat(what, ": ", sqlite3_errmsg(db));
  switch (code & 0xff) {
    case SQLITE_FULL:
      return absl::ResourceExhaustedError(msg);
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
    case SQLITE_READONLY:
      return absl::PermissionDeniedError(msg);
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
      return absl::DataLossError(msg);
    case SQLITE_CONSTRAINT:
      return absl::AlreadyExistsError(msg);
    default:
      return absl::InternalError(msg);
  }
}

absl::Status Exec(sqlite3* db, const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err != nullptr ? err : "unknown error";
    sqlite3_free(err);
    return absl::InternalError(absl::StrCat("sqlite: ", msg));
  }
  return absl::OkStatus();
}

absl::StatusOr<sqlite3*> OpenConnection(const std::string& path) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(
      path.c_str(), &db,
      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
      nullptr);
  if (rc != SQLITE_OK) {
    absl::Status st = db != nullptr
                          ? SqliteError(db, absl::StrCat("open ", path))
                          : absl::InternalError(absl::StrCat("open ", path));
    sqlite3_close(db);
    return st;
  }
  sqlite3_busy_timeout(db, 10000);
  return db;
}

}  // namespace tracehealth::server
