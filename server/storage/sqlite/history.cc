#include "server/storage/sqlite/history.h"

#include <sqlite3.h>

#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "common/status.h"
#include "server/storage/history_window.h"
#include "server/storage/sqlite/connection.h"
#include "server/storage/sqlite/heartbeats.h"
#include "server/storage/sqlite/statement.h"

namespace tracehealth::server {
namespace {}  // namespace

absl::StatusOr<HistoryRows> ReadHistory(sqlite3* db, const std::string& host_id,
                                        int64_t from_ns, int64_t to_ns,
                                        size_t max_rows) {
  std::vector<HistoryEntry> entries;
  TH_ASSIGN_OR_RETURN(auto full, SqliteStatement::Prepare(db, R"sql(
SELECT id, seq, observed_at_ns, received_at_ns, worst_risk,
       attach_latency_seconds, pool_budget_ratio, purge_seconds
FROM reports
WHERE host_id = ?1 AND observed_at_ns >= ?2 AND observed_at_ns < ?3)sql"));
  full->BindText(1, host_id);
  full->BindInt(2, from_ns);
  full->BindInt(3, to_ns);
  int rc;
  while ((rc = full->Step()) == SQLITE_ROW) {
    HistoryEntry e;
    e.base = full->Int(0);
    ReportRow& r = e.row;
    r.host_id = host_id;
    r.seq = static_cast<uint64_t>(full->Int(1));
    r.observed_at_ns = full->Int(2);
    r.received_at_ns = full->Int(3);
    r.worst_risk = static_cast<int>(full->Int(4));
    if (!full->IsNull(5)) r.attach_latency_seconds = full->Double(5);
    if (!full->IsNull(6)) r.pool_budget_ratio = full->Double(6);
    if (!full->IsNull(7)) r.purge_seconds = full->Double(7);
    entries.push_back(std::move(e));
  }
  if (rc != SQLITE_DONE) return SqliteError(db, "read host history");
  TH_ASSIGN_OR_RETURN(std::vector<StoredChunk> chunks,
                      ReadChunks(db, host_id, from_ns, to_ns));
  for (const StoredChunk& c : chunks) {
    AddBeatEntries(host_id, c.beats, c.base_id, from_ns, to_ns, &entries);
  }
  const size_t k = OrderAndStride(&entries, max_rows);
  HistoryRows out;
  out.matched = static_cast<int64_t>(entries.size());
  if (entries.empty()) return out;
  TH_ASSIGN_OR_RETURN(
      auto blob,
      SqliteStatement::Prepare(
          db, "SELECT report, worst_risk FROM reports WHERE id = ?1"));
  // A full report's bytes and risk, read once for all its heartbeats.
  absl::flat_hash_map<int64_t, std::pair<std::string, int>> full_reports;
  for (size_t i = 0; i < entries.size(); i += k) {
    HistoryEntry& e = entries[i];
    auto it = full_reports.find(e.base);
    if (it == full_reports.end()) {
      blob->Reset();
      blob->BindInt(1, e.base);
      rc = blob->Step();
      if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        return SqliteError(db, "read host history");
      }
      std::pair<std::string, int> v;
      if (rc == SQLITE_ROW) v = {blob->Blob(0), static_cast<int>(blob->Int(1))};
      it = full_reports.emplace(e.base, std::move(v)).first;
    }
    e.row.blob = it->second.first;
    if (e.row.heartbeat) e.row.worst_risk = it->second.second;
    out.rows.push_back(std::move(e.row));
  }
  return out;
}

}  // namespace tracehealth::server
