// SqliteStatement: a prepared statement that finalizes itself.
//
// Binds by 1-based parameter index, reads by 0-based column. Text and blob
// bindings are not copied (SQLITE_STATIC): the bound bytes must stay alive
// until the statement is reset or stepped to completion.
//
// Thread safety: none; it belongs to its connection's user.
#ifndef TRACEHEALTH_SERVER_STORAGE_SQLITE_STATEMENT_H_
#define TRACEHEALTH_SERVER_STORAGE_SQLITE_STATEMENT_H_

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tracehealth::server {

class SqliteStatement {
 public:
  // Prepares `sql` on `db` (kept prepared for reuse). Errors: SqliteError's.
  static absl::StatusOr<std::unique_ptr<SqliteStatement>> Prepare(
      sqlite3* db, const char* sql);
  ~SqliteStatement() { sqlite3_finalize(stmt_); }
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;

  sqlite3_stmt* get() { return stmt_; }
  // Ready to run again, with no bindings.
  void Reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  void BindText(int i, absl::string_view s) {
    sqlite3_bind_text(stmt_, i, s.data(), static_cast<int>(s.size()),
                      SQLITE_STATIC);
  }
  void BindBlob(int i, absl::string_view s) {
    sqlite3_bind_blob(stmt_, i, s.data(), static_cast<int>(s.size()),
                      SQLITE_STATIC);
  }
  void BindInt(int i, int64_t v) { sqlite3_bind_int64(stmt_, i, v); }
  void BindDouble(int i, double v) { sqlite3_bind_double(stmt_, i, v); }
  // NULL when unset.
  void BindOptDouble(int i, const std::optional<double>& v) {
    if (v.has_value()) {
      sqlite3_bind_double(stmt_, i, *v);
    } else {
      sqlite3_bind_null(stmt_, i);
    }
  }
  void BindOptInt(int i, const std::optional<int64_t>& v) {
    if (v.has_value()) {
      sqlite3_bind_int64(stmt_, i, *v);
    } else {
      sqlite3_bind_null(stmt_, i);
    }
  }
  // SQLITE_ROW, SQLITE_DONE or an error code.
  int Step() { return sqlite3_step(stmt_); }
  std::string Text(int col) {
    const unsigned char* p = sqlite3_column_text(stmt_, col);
    int n = sqlite3_column_bytes(stmt_, col);
    return p != nullptr ? std::string(reinterpret_cast<const char*>(p), n)
                        : std::string();
  }
  std::string Blob(int col) {
    const void* p = sqlite3_column_blob(stmt_, col);
    int n = sqlite3_column_bytes(stmt_, col);
    return p != nullptr ? std::string(static_cast<const char*>(p), n)
                        : std::string();
  }
  int64_t Int(int col) { return sqlite3_column_int64(stmt_, col); }
  double Double(int col) { return sqlite3_column_double(stmt_, col); }
  bool IsNull(int col) {
    return sqlite3_column_type(stmt_, col) == SQLITE_NULL;
  }

 private:
  explicit SqliteStatement(sqlite3_stmt* stmt) : stmt_(stmt) {}
  sqlite3_stmt* const stmt_;
};

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_STORAGE_SQLITE_STATEMENT_H_
