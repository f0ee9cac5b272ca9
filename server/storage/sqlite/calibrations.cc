#include "server/storage/sqlite/calibrations.h"

#include <sqlite3.h>

#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "server/storage/sqlite/connection.h"
#include "server/storage/sqlite/statement.h"

namespace tracehealth::server {
namespace {

constexpr char kColumns[] =
    "host_id, hardware_class, measured_at_ns, c_visit_seconds, "
    "fixed_seconds, received_at_ns, calibration";

}  // namespace

absl::StatusOr<bool> PutCalibrationRow(sqlite3* db, const CalibrationRow& r) {
  // The primary key (host_id, measured_at_ns) keeps the first copy.
  TH_ASSIGN_OR_RETURN(
      auto stmt,
      SqliteStatement::Prepare(
          db, absl::StrCat("INSERT OR IGNORE INTO calibrations (", kColumns,
                           ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)")
                  .c_str()));
  stmt->BindText(1, r.host_id);
  stmt->BindText(2, r.hardware_class);
  stmt->BindInt(3, r.measured_at_ns);
  stmt->BindDouble(4, r.c_visit_seconds);
  stmt->BindDouble(5, r.fixed_seconds);
  stmt->BindInt(6, r.received_at_ns);
  stmt->BindBlob(7, r.blob);
  if (stmt->Step() != SQLITE_DONE) return SqliteError(db, "put calibration");
  return sqlite3_changes(db) == 1;
}

absl::StatusOr<std::vector<CalibrationRow>> ListCalibrationRows(sqlite3* db) {
  TH_ASSIGN_OR_RETURN(
      auto stmt,
      SqliteStatement::Prepare(
          db, absl::StrCat("SELECT ", kColumns,
                           " FROM calibrations ORDER BY measured_at_ns, "
                           "host_id")
                  .c_str()));
  std::vector<CalibrationRow> out;
  int rc;
  while ((rc = stmt->Step()) == SQLITE_ROW) {
    CalibrationRow r;
    r.host_id = stmt->Text(0);
    r.hardware_class = stmt->Text(1);
    r.measured_at_ns = stmt->Int(2);
    r.c_visit_seconds = stmt->Double(3);
    r.fixed_seconds = stmt->Double(4);
    r.received_at_ns = stmt->Int(5);
    r.blob = stmt->Blob(6);
    out.push_back(std::move(r));
  }
  if (rc != SQLITE_DONE) return SqliteError(db, "list calibrations");
  return out;
}

}  // namespace tracehealth::server
