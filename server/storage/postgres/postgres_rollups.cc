// PostgresStorage's hourly rollups (pg_rollups.h): the pass, their reads
// and their retention.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "server/storage/postgres/pg_rollups.h"
#include "server/storage/postgres/postgres_storage.h"
#include "server/storage/rollup.h"

namespace tracehealth::server {

absl::StatusOr<RollupPass> PostgresStorage::RollUp(int64_t before_ns,
                                                   int max_hours) {
  if (max_hours < 1) {
    return absl::InvalidArgumentError("max_hours must be at least 1");
  }
  if (old_schema_) {
    return absl::FailedPreconditionError("store opened at an old schema");
  }
  const int64_t end = HourStart(before_ns);
  RollupPass pass;
  std::optional<int64_t> mark;
  RollupFolder folder;
  int64_t to = 0;
  {
    absl::MutexLock lock(&read_.mu);
    TH_ASSIGN_OR_RETURN(PgConnection * conn, Ready(read_));
    TH_ASSIGN_OR_RETURN(mark, PgRollupWatermark(*conn));
    int64_t from = end;
    if (mark.has_value()) {
      from = *mark;
    } else {
      TH_ASSIGN_OR_RETURN(std::optional<int64_t> oldest,
                          PgOldestObservation(*conn));
      if (oldest.has_value()) from = std::min(end, HourStart(*oldest));
    }
    pass.rolled_through_ns = mark;
    if (from >= end && mark.has_value()) return pass;  // nothing complete
    to = std::min(end, from + max_hours * kRollupHourNs);
    pass.hours = (to - from) / kRollupHourNs;
    pass.more = to < end;
    if (to > from) {
      TH_RETURN_IF_ERROR(PgFoldStoredHours(*conn, from, to, &folder));
    }
  }
  std::vector<RollupRow> rows = folder.Take();
  {
    absl::MutexLock lock(&control_.mu);
    TH_ASSIGN_OR_RETURN(PgConnection * conn, Ready(control_));
    TH_RETURN_IF_ERROR(PgWriteRollups(*conn, mark, to, rows));
  }
  pass.rows = static_cast<int64_t>(rows.size());
  pass.rolled_through_ns = to;
  return pass;
}

absl::StatusOr<std::vector<RollupRow>> PostgresStorage::ReadHostRollups(
    const std::string& host_id, int64_t from_ns, int64_t to_ns) {
  absl::MutexLock lock(&read_.mu);
  TH_ASSIGN_OR_RETURN(PgConnection * conn, Ready(read_));
  return PgReadRollups(*conn, host_id, from_ns, to_ns);
}

absl::StatusOr<int64_t> PostgresStorage::DeleteRollupsBefore(
    int64_t hour_before_ns) {
  absl::MutexLock lock(&control_.mu);
  TH_ASSIGN_OR_RETURN(PgConnection * conn, Ready(control_));
  return PgDeleteRollups(*conn, hour_before_ns);
}

}  // namespace tracehealth::server
