#include "server/storage/sqlite/alerts.h"

#include <sqlite3.h>

#include <map>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status.h"
#include "server/storage/alert_transitions.h"
#include "server/storage/labels_json.h"
#include "server/storage/sqlite/connection.h"
#include "server/storage/sqlite/statement.h"

namespace tracehealth::server {
namespace {

constexpr char kColumns[] =
    "rule, host_id, state, severity, labels_json, annotations_json, value, "
    "active_since_ns, fired_at_ns, resolved_at_ns";

AlertRow ReadRow(SqliteStatement& stmt) {
  AlertRow a;
  a.rule = stmt.Text(0);
  a.host_id = stmt.Text(1);
  a.state = static_cast<int>(stmt.Int(2));
  a.severity = stmt.Text(3);
  a.labels = JsonToMap(stmt.Text(4));
  a.annotations = JsonToMap(stmt.Text(5));
  a.value = stmt.Double(6);
  a.active_since_ns = stmt.Int(7);
  if (!stmt.IsNull(8)) a.fired_at_ns = stmt.Int(8);
  if (!stmt.IsNull(9)) a.resolved_at_ns = stmt.Int(9);
  return a;
}

}  // namespace

absl::Status PutAlertRow(sqlite3* db, const AlertRow& a) {
  TH_ASSIGN_OR_RETURN(
      auto stmt,
      SqliteStatement::Prepare(
          db,
          "INSERT OR REPLACE INTO alerts (rule, host_id, state, severity, "
          "labels_json, annotations_json, value, active_since_ns, fired_at_ns, "
          "resolved_at_ns) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"));
  std::string labels = MapToJson(a.labels);
  std::string annotations = MapToJson(a.annotations);
  stmt->BindText(1, a.rule);
  stmt->BindText(2, a.host_id);
  stmt->BindInt(3, a.state);
  stmt->BindText(4, a.severity);
  stmt->BindText(5, labels);
  stmt->BindText(6, annotations);
  stmt->BindDouble(7, a.value);
  stmt->BindInt(8, a.active_since_ns);
  stmt->BindOptInt(9, a.fired_at_ns);
  stmt->BindOptInt(10, a.resolved_at_ns);
  if (stmt->Step() != SQLITE_DONE) return SqliteError(db, "put alert");
  return absl::OkStatus();
}

absl::StatusOr<std::vector<AlertRow>> ListAlertRows(sqlite3* db,
                                                    const AlertFilter& filter) {
  std::vector<int> states = filter.states;
  if (states.empty()) states = {1, 2};  // pending, firing
  std::string sql =
      absl::StrCat("SELECT ", kColumns, " FROM alerts WHERE state IN (",
                   absl::StrJoin(states, ","), ")",
                   filter.host_id.empty() ? "" : " AND host_id = ?1",
                   " ORDER BY active_since_ns DESC, rule, host_id LIMIT ",
                   filter.limit == 0 ? 1000 : filter.limit);
  TH_ASSIGN_OR_RETURN(auto stmt, SqliteStatement::Prepare(db, sql.c_str()));
  if (!filter.host_id.empty()) stmt->BindText(1, filter.host_id);
  std::vector<AlertRow> out;
  int rc;
  while ((rc = stmt->Step()) == SQLITE_ROW) out.push_back(ReadRow(*stmt));
  if (rc != SQLITE_DONE) return SqliteError(db, "list alerts");
  return out;
}

absl::StatusOr<std::optional<AlertRow>> CurrentAlertRow(
    sqlite3* db, const std::string& rule, const std::string& host_id) {
  TH_ASSIGN_OR_RETURN(
      auto stmt,
      SqliteStatement::Prepare(
          db, absl::StrCat("SELECT ", kColumns,
                           " FROM alerts WHERE rule = ?1 AND host_id = ?2 "
                           "ORDER BY active_since_ns DESC LIMIT 1")
                  .c_str()));
  stmt->BindText(1, rule);
  stmt->BindText(2, host_id);
  int rc = stmt->Step();
  if (rc == SQLITE_DONE) return std::optional<AlertRow>();
  if (rc != SQLITE_ROW) return SqliteError(db, "current alert");
  return std::optional<AlertRow>(ReadRow(*stmt));
}

absl::Status DeleteAlertRow(sqlite3* db, const std::string& rule,
                            const std::string& host_id,
                            int64_t active_since_ns) {
  TH_ASSIGN_OR_RETURN(auto stmt, SqliteStatement::Prepare(
                                     db,
                                     "DELETE FROM alerts WHERE rule = ?1 AND "
                                     "host_id = ?2 AND active_since_ns = ?3"));
  stmt->BindText(1, rule);
  stmt->BindText(2, host_id);
  stmt->BindInt(3, active_since_ns);
  if (stmt->Step() != SQLITE_DONE) return SqliteError(db, "delete alert");
  return absl::OkStatus();
}

absl::StatusOr<TransitionResult> TransitionAlertRow(
    sqlite3* db, const std::optional<AlertEpisode>& expected,
    const AlertRow& next) {
  TH_RETURN_IF_ERROR(Exec(db, "BEGIN IMMEDIATE"));
  auto fail = [db](absl::Status st) {
    (void)Exec(db, "ROLLBACK");
    return st;
  };
  TransitionResult result;
  absl::StatusOr<std::optional<AlertRow>> current =
      CurrentAlertRow(db, next.rule, next.host_id);
  if (!current.ok()) return fail(current.status());
  result.current = *std::move(current);
  if (IsExpectedEpisode(expected, result.current) &&
      IsAllowedTransition(result.current, next)) {
    result.applied = true;
    absl::Status st;
    if (next.state != 0) {
      st = PutAlertRow(db, next);
      result.current = next;
    } else if (result.current.has_value()) {
      st = DeleteAlertRow(db, next.rule, next.host_id,
                          result.current->active_since_ns);
      if (st.ok()) {
        current = CurrentAlertRow(db, next.rule, next.host_id);
        st = current.status();
        if (st.ok()) result.current = *std::move(current);
      }
    }
    if (!st.ok()) return fail(st);
  }
  if (absl::Status st = Exec(db, "COMMIT"); !st.ok()) return fail(st);
  return result;
}

}  // namespace tracehealth::server
