#include "server/storage/sqlite/retention_search.h"

#include <sqlite3.h>

#include "common/status.h"
#include "server/storage/sqlite/connection.h"
#include "server/storage/sqlite/statement.h"

namespace tracehealth::server {

absl::StatusOr<std::optional<int64_t>> FindRetentionEnd(
    sqlite3* db, int64_t received_before_ns) {
  TH_ASSIGN_OR_RETURN(
      auto bounds,
      SqliteStatement::Prepare(db, "SELECT min(id), max(id) FROM reports"));
  if (bounds->Step() != SQLITE_ROW) return SqliteError(db, "retention bounds");
  if (bounds->IsNull(0)) return std::nullopt;  // no rows
  int64_t lo = bounds->Int(0);
  int64_t hi = bounds->Int(1) + 1;
  TH_ASSIGN_OR_RETURN(
      auto probe,
      SqliteStatement::Prepare(db,
                               "SELECT id, received_at_ns FROM reports WHERE "
                               "id >= ?1 ORDER BY id LIMIT 1"));
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    probe->Reset();
    probe->BindInt(1, mid);
    int rc = probe->Step();
    if (rc == SQLITE_ROW && probe->Int(0) < hi &&
        probe->Int(1) < received_before_ns) {
      lo = probe->Int(0) + 1;
    } else if (rc == SQLITE_ROW || rc == SQLITE_DONE) {
      hi = mid;
    } else {
      return SqliteError(db, "retention search");
    }
  }
  probe->Reset();
  return lo;
}

}  // namespace tracehealth::server
