// SqliteStorage, reading stored reports back: one report by host and seq,
// whole or rebuilt from its heartbeat and the full report it refers to, and
// a host's history over full reports and heartbeats. The write path, the
// ledger and retention are in sqlite_storage.cc.
#include <sqlite3.h>

#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "server/storage/heartbeat_report.h"
#include "server/storage/sqlite/connection.h"
#include "server/storage/sqlite/heartbeats.h"
#include "server/storage/sqlite/history.h"
#include "server/storage/sqlite/sqlite_storage.h"
#include "server/storage/sqlite/statement.h"

namespace tracehealth::server {

std::optional<SqliteStorage::RowRef> SqliteStorage::RowOf(
    const std::string& host_id, uint64_t seq) {
  absl::MutexLock lock(&rows_mu_);
  auto it = newest_rows_.find(host_id);
  if (it == newest_rows_.end()) return std::nullopt;
  const NewestRows& n = it->second;
  if (n.seq == seq) return RowRef{n.rowid, n.heartbeat};
  if (n.previous_seq == seq && seq != 0)
    return RowRef{n.previous_rowid, n.previous_heartbeat};
  return std::nullopt;
}

absl::StatusOr<std::string> SqliteStorage::HeartbeatReport(
    const std::string& host_id, uint64_t seq) {
  TH_ASSIGN_OR_RETURN(auto beat, FindBeat(read_db_, host_id, seq));
  if (!beat.has_value()) {
    return absl::NotFoundError(absl::StrCat("no report ", host_id, "/", seq));
  }
  TH_ASSIGN_OR_RETURN(
      auto base, SqliteStatement::Prepare(
                     read_db_, "SELECT report FROM reports WHERE id = ?1"));
  base->BindInt(1, beat->first);
  const int rc = base->Step();
  if (rc == SQLITE_DONE) {
    return absl::DataLossError(
        absl::StrCat("heartbeat ", host_id, "/", seq, " without its report"));
  }
  if (rc != SQLITE_ROW) return SqliteError(read_db_, "get report");
  return ReportOfHeartbeat(base->Blob(0), beat->second);
}

absl::StatusOr<std::string> SqliteStorage::GetReport(const std::string& host_id,
                                                     uint64_t seq) {
  const std::optional<RowRef> row = RowOf(host_id, seq);
  absl::MutexLock lock(&read_mu_);
  if (row.has_value() && row->heartbeat) return HeartbeatReport(host_id, seq);
  const std::optional<int64_t> rowid =
      row.has_value() ? std::optional<int64_t>(row->rowid) : std::nullopt;
  if (rowid.has_value()) {
    TH_ASSIGN_OR_RETURN(
        auto by_id,
        SqliteStatement::Prepare(
            read_db_,
            "SELECT report, host_id, seq FROM reports WHERE id = ?1"));
    by_id->BindInt(1, *rowid);
    int rc = by_id->Step();
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
      return SqliteError(read_db_, "get report");
    }
    // The row is checked: retention may have deleted the previous one.
    if (rc == SQLITE_ROW && by_id->Text(1) == host_id &&
        static_cast<uint64_t>(by_id->Int(2)) == seq) {
      return by_id->Blob(0);
    }
  }
  TH_ASSIGN_OR_RETURN(
      auto stmt,
      SqliteStatement::Prepare(
          read_db_,
          "SELECT report FROM reports WHERE host_id = ?1 AND seq = ?2"));
  stmt->BindText(1, host_id);
  stmt->BindInt(2, static_cast<int64_t>(seq));
  int rc = stmt->Step();
  if (rc == SQLITE_DONE) return HeartbeatReport(host_id, seq);
  if (rc != SQLITE_ROW) return SqliteError(read_db_, "get report");
  return stmt->Blob(0);
}

absl::StatusOr<HistoryRows> SqliteStorage::ReadHostHistory(
    const std::string& host_id, int64_t from_ns, int64_t to_ns,
    size_t max_rows) {
  if (max_rows == 0)
    return absl::InvalidArgumentError("max_rows must be at least 1");
  absl::MutexLock lock(&read_mu_);
  return ReadHistory(read_db_, host_id, from_ns, to_ns, max_rows);
}

}  // namespace tracehealth::server
