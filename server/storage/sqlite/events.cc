#include "server/storage/sqlite/events.h"

#include <sqlite3.h>

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "server/storage/sqlite/connection.h"
#include "server/storage/sqlite/statement.h"

namespace tracehealth::server {
namespace {

constexpr char kColumns[] =
    "host_id, boot_id, kmsg_seq, logged_at_ns, kind, model, predicted, "
    "received_at_ns, event";

EventRow ReadRow(SqliteStatement& stmt) {
  EventRow e;
  e.host_id = stmt.Text(0);
  e.boot_id = stmt.Text(1);
  e.kmsg_seq = static_cast<uint64_t>(stmt.Int(2));
  e.logged_at_ns = stmt.Int(3);
  e.kind = static_cast<int>(stmt.Int(4));
  e.model = static_cast<int>(stmt.Int(5));
  e.predicted = static_cast<int>(stmt.Int(6));
  e.received_at_ns = stmt.Int(7);
  e.blob = stmt.Blob(8);
  return e;
}

absl::StatusOr<std::vector<bool>> InsertAll(sqlite3* db,
                                            absl::Span<const EventRow> rows) {
  // The primary key (host_id, boot_id, kmsg_seq) keeps the first copy.
  TH_ASSIGN_OR_RETURN(
      auto stmt,
      SqliteStatement::Prepare(
          db, absl::StrCat("INSERT OR IGNORE INTO events (", kColumns,
                           ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)")
                  .c_str()));
  std::vector<bool> stored;
  stored.reserve(rows.size());
  for (const EventRow& e : rows) {
    stmt->Reset();
    stmt->BindText(1, e.host_id);
    stmt->BindText(2, e.boot_id);
    // SQLite integers are signed 64-bit: a sequence number past 2^63 is
    // kept as its two's-complement bit pattern and read back the same.
    stmt->BindInt(3, static_cast<int64_t>(e.kmsg_seq));
    stmt->BindInt(4, e.logged_at_ns);
    stmt->BindInt(5, e.kind);
    stmt->BindInt(6, e.model);
    stmt->BindInt(7, e.predicted);
    stmt->BindInt(8, e.received_at_ns);
    stmt->BindBlob(9, e.blob);
    if (stmt->Step() != SQLITE_DONE) return SqliteError(db, "put event");
    stored.push_back(sqlite3_changes(db) == 1);
  }
  return stored;
}

}  // namespace

absl::StatusOr<std::vector<bool>> PutEventRows(
    sqlite3* db, absl::Span<const EventRow> rows) {
  if (rows.empty()) return std::vector<bool>();
  TH_RETURN_IF_ERROR(Exec(db, "BEGIN IMMEDIATE"));
  absl::StatusOr<std::vector<bool>> stored = InsertAll(db, rows);
  absl::Status st = stored.status();
  if (st.ok()) st = Exec(db, "COMMIT");
  if (!st.ok()) {
    (void)Exec(db, "ROLLBACK");
    return st;
  }
  return stored;
}

absl::StatusOr<std::vector<EventRow>> ListEventRows(sqlite3* db,
                                                    const EventFilter& filter) {
  std::string sql = absl::StrCat(
      "SELECT ", kColumns,
      " FROM events WHERE logged_at_ns >= ?1 AND logged_at_ns < ?2",
      filter.host_id.empty() ? "" : " AND host_id = ?3",
      filter.predicted == 0 ? "" : " AND predicted = ?4",
      " ORDER BY logged_at_ns DESC, host_id, boot_id, kmsg_seq LIMIT ",
      filter.limit == 0 ? 100 : filter.limit);
  TH_ASSIGN_OR_RETURN(auto stmt, SqliteStatement::Prepare(db, sql.c_str()));
  stmt->BindInt(1, filter.from_ns);
  stmt->BindInt(2, filter.to_ns);
  if (!filter.host_id.empty()) stmt->BindText(3, filter.host_id);
  if (filter.predicted != 0) stmt->BindInt(4, filter.predicted);
  std::vector<EventRow> out;
  int rc;
  while ((rc = stmt->Step()) == SQLITE_ROW) out.push_back(ReadRow(*stmt));
  if (rc != SQLITE_DONE) return SqliteError(db, "list events");
  return out;
}

}  // namespace tracehealth::server
