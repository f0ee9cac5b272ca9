#include "server/storage/sqlite/latest_rows.h"

#include <algorithm>
#include <string>

#include "common/status.h"
#include "server/storage/sqlite/connection.h"
#include "server/storage/sqlite/statement.h"

namespace tracehealth::server {

absl::Status ReadLatestRows(sqlite3* db,
                            std::vector<std::pair<LatestRow, int64_t>>& latest,
                            const std::function<void(LatestRow&)>& fn) {
  // In row order: the newest rows of a fleet lie close together (the last
  // interval's reports), so consecutive lookups read neighbouring pages.
  std::sort(latest.begin(), latest.end(),
            [](const auto& a, const auto& b) { return a.second < b.second; });
  // Retention keeps each host's newest row, so every lookup finds one
  // unless the file was edited by hand: such a host is left out, as the
  // join of earlier versions left it out. The record is read where there is
  // one (about 40 share a page where a report fills one); the report only
  // for a row stored without (before schema 8).
  TH_ASSIGN_OR_RETURN(
      auto record_stmt,
      SqliteStatement::Prepare(db, "SELECT record FROM records WHERE id = ?1"));
  TH_ASSIGN_OR_RETURN(
      auto report_stmt,
      SqliteStatement::Prepare(db, "SELECT report FROM reports WHERE id = ?1"));
  for (auto& [row, rowid] : latest) {
    record_stmt->Reset();
    record_stmt->BindInt(1, rowid);
    int rc = record_stmt->Step();
    if (rc == SQLITE_ROW) {
      row.record = record_stmt->Blob(0);
    } else if (rc != SQLITE_DONE) {
      return SqliteError(db, "load latest record");
    } else {
      report_stmt->Reset();
      report_stmt->BindInt(1, rowid);
      rc = report_stmt->Step();
      if (rc == SQLITE_DONE) continue;
      if (rc != SQLITE_ROW) return SqliteError(db, "load latest report");
      row.blob = report_stmt->Blob(0);
    }
    fn(row);
    // One host's bytes at a time, not the whole fleet's at the end.
    std::string().swap(row.record);
    std::string().swap(row.blob);
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> DeleteOldRows(sqlite3* db, int64_t start, int64_t end) {
  TH_ASSIGN_OR_RETURN(
      auto reports,
      SqliteStatement::Prepare(
          db,
          "DELETE FROM reports WHERE id >= ?1 AND id < ?2 AND seq < "
          "(SELECT h.latest_seq FROM hosts h WHERE h.host_id = "
          "reports.host_id) AND NOT EXISTS (SELECT 1 FROM heartbeats b "
          "WHERE b.base_id = reports.id)"));
  // The records of the reports just deleted: those of the range whose
  // report is gone.
  TH_ASSIGN_OR_RETURN(
      auto records,
      SqliteStatement::Prepare(
          db,
          "DELETE FROM records WHERE id >= ?1 AND id < ?2 AND NOT EXISTS "
          "(SELECT 1 FROM reports r WHERE r.id = records.id)"));
  TH_RETURN_IF_ERROR(Exec(db, "BEGIN IMMEDIATE"));
  int64_t deleted = 0;
  absl::Status st;
  reports->BindInt(1, start);
  reports->BindInt(2, end);
  if (reports->Step() != SQLITE_DONE) {
    st = SqliteError(db, "delete old reports");
  } else {
    deleted = sqlite3_changes(db);
    records->BindInt(1, start);
    records->BindInt(2, end);
    if (records->Step() != SQLITE_DONE) {
      st = SqliteError(db, "delete old records");
    }
  }
  if (st.ok()) st = Exec(db, "COMMIT");
  if (!st.ok()) {
    (void)Exec(db, "ROLLBACK");
    return st;
  }
  return deleted;
}

}  // namespace tracehealth::server
