#include "server/storage/sqlite/rollups.h"

#include <sqlite3.h>

#include <limits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "server/storage/heartbeat_chunk.h"
#include "server/storage/history_window.h"
#include "server/storage/sqlite/connection.h"
#include "server/storage/sqlite/statement.h"

namespace tracehealth::server {
namespace {

constexpr char kColumns[] =
    "host_id, hour_start_ns, reports, first_seq, last_seq, threads_min, "
    "threads_max, threads_last, attach_latency_seconds_min, "
    "attach_latency_seconds_max, attach_latency_seconds_last, "
    "pool_budget_ratio_min, pool_budget_ratio_max, pool_budget_ratio_last, "
    "purge_seconds_min, purge_seconds_max, purge_seconds_last, "
    "worst_risk_max, worst_risk_last";

std::optional<int64_t> AsInt(const std::optional<uint64_t>& v) {
  if (!v.has_value()) return std::nullopt;
  return static_cast<int64_t>(*v);
}

void BindRange(SqliteStatement& s, int first, const RollupRange<double>& r) {
  s.BindOptDouble(first, r.min);
  s.BindOptDouble(first + 1, r.max);
  s.BindOptDouble(first + 2, r.last);
}

std::optional<double> OptDouble(SqliteStatement& s, int col) {
  if (s.IsNull(col)) return std::nullopt;
  return s.Double(col);
}
std::optional<uint64_t> OptUint(SqliteStatement& s, int col) {
  if (s.IsNull(col)) return std::nullopt;
  return static_cast<uint64_t>(s.Int(col));
}
RollupRange<double> DoubleRange(SqliteStatement& s, int first) {
  return {OptDouble(s, first), OptDouble(s, first + 1),
          OptDouble(s, first + 2)};
}

absl::StatusOr<std::optional<int64_t>> OneOptionalInt(sqlite3* db,
                                                      const char* sql) {
  TH_ASSIGN_OR_RETURN(auto s, SqliteStatement::Prepare(db, sql));
  int rc = s->Step();
  if (rc == SQLITE_DONE) return std::nullopt;
  if (rc != SQLITE_ROW) return SqliteError(db, sql);
  if (s->IsNull(0)) return std::nullopt;
  return s->Int(0);
}

}  // namespace

absl::StatusOr<std::optional<int64_t>> ReadRollupWatermark(sqlite3* db) {
  return OneOptionalInt(db, "SELECT rolled_through_ns FROM rollup_state");
}

absl::StatusOr<std::optional<int64_t>> OldestObservation(sqlite3* db) {
  return OneOptionalInt(
      db,
      "SELECT min(t) FROM (SELECT min(observed_at_ns) AS t FROM reports "
      "UNION ALL SELECT min(first_observed_ns) FROM heartbeats)");
}

absl::Status FoldStoredHours(sqlite3* db, int64_t from_ns, int64_t to_ns,
                             RollupFolder* folder) {
  TH_ASSIGN_OR_RETURN(auto full, SqliteStatement::Prepare(db, R"sql(
SELECT host_id, seq, observed_at_ns, received_at_ns, worst_risk,
       attach_latency_seconds, pool_budget_ratio, purge_seconds, report
FROM reports WHERE observed_at_ns >= ?1 AND observed_at_ns < ?2)sql"));
  full->BindInt(1, from_ns);
  full->BindInt(2, to_ns);
  int rc;
  while ((rc = full->Step()) == SQLITE_ROW) {
    ReportRow r;
    r.host_id = full->Text(0);
    r.seq = static_cast<uint64_t>(full->Int(1));
    r.observed_at_ns = full->Int(2);
    r.received_at_ns = full->Int(3);
    r.worst_risk = static_cast<int>(full->Int(4));
    r.attach_latency_seconds = OptDouble(*full, 5);
    r.pool_budget_ratio = OptDouble(*full, 6);
    r.purge_seconds = OptDouble(*full, 7);
    r.threads = ThreadsOfReport(full->Blob(8));
    folder->Add(r);
  }
  if (rc != SQLITE_DONE) return SqliteError(db, "roll up reports");
  // A chunk's beats lie within ChunkEncoder::kMaxSpanNs of its first, so
  // the chunks of [from, to) start in [from - span, to): an index range.
  // Chunks written before that bound (schema 10: heartbeat_spans) started
  // at or before unbounded_through_ns and are read by the range below it.
  TH_ASSIGN_OR_RETURN(
      std::optional<int64_t> unbounded,
      OneOptionalInt(db, "SELECT unbounded_through_ns FROM heartbeat_spans"));
  const std::vector<std::pair<int64_t, int64_t>> ranges =
      ChunkStartRanges(from_ns, to_ns, unbounded);
  TH_ASSIGN_OR_RETURN(auto chunks, SqliteStatement::Prepare(db, R"sql(
SELECT h.host_id, h.base_id, h.beats, r.worst_risk
FROM heartbeats h LEFT JOIN reports r ON r.id = h.base_id
WHERE h.first_observed_ns >= ?1 AND h.first_observed_ns <= ?2
  AND h.last_observed_ns >= ?3 AND h.first_observed_ns < ?4)sql"));
  std::vector<HistoryEntry> entries;
  for (const auto& [lo, hi] : ranges) {
    chunks->Reset();
    chunks->BindInt(1, lo);
    chunks->BindInt(2, hi);
    chunks->BindInt(3, from_ns);
    chunks->BindInt(4, to_ns);
    while ((rc = chunks->Step()) == SQLITE_ROW) {
      const std::string host_id = chunks->Text(0);
      absl::StatusOr<std::vector<Beat>> beats = DecodeChunk(chunks->Blob(2));
      if (!beats.ok()) {
        return Annotate(beats.status(),
                        absl::StrCat("heartbeats of ", host_id));
      }
      entries.clear();
      AddBeatEntries(host_id, *beats, chunks->Int(1), from_ns, to_ns, &entries);
      // A heartbeat's risk is its full report's (risks count exactly in the
      // material content); 0 when the full report is gone.
      const int risk = chunks->IsNull(3) ? 0 : static_cast<int>(chunks->Int(3));
      for (HistoryEntry& e : entries) {
        e.row.worst_risk = risk;
        folder->Add(e.row);
      }
    }
    if (rc != SQLITE_DONE) break;
  }
  if (rc != SQLITE_DONE) return SqliteError(db, "roll up heartbeats");
  return absl::OkStatus();
}

absl::Status WriteRollups(sqlite3* db, std::optional<int64_t> expected,
                          int64_t rolled_through_ns,
                          const std::vector<RollupRow>& rows) {
  TH_RETURN_IF_ERROR(Exec(db, "BEGIN IMMEDIATE"));
  auto body = [&]() -> absl::Status {
    TH_ASSIGN_OR_RETURN(std::optional<int64_t> now, ReadRollupWatermark(db));
    if (now != expected) {
      return absl::AbortedError(
          "the rollup watermark moved during the pass (another pass ran)");
    }
    TH_ASSIGN_OR_RETURN(
        auto ins,
        SqliteStatement::Prepare(
            db, absl::StrCat("INSERT OR REPLACE INTO rollups (", kColumns,
                             ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, "
                             "?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, "
                             "?19)")
                    .c_str()));
    for (const RollupRow& r : rows) {
      ins->Reset();
      ins->BindText(1, r.host_id);
      ins->BindInt(2, r.hour_start_ns);
      ins->BindInt(3, r.reports);
      ins->BindInt(4, static_cast<int64_t>(r.first_seq));
      ins->BindInt(5, static_cast<int64_t>(r.last_seq));
      ins->BindOptInt(6, AsInt(r.threads.min));
      ins->BindOptInt(7, AsInt(r.threads.max));
      ins->BindOptInt(8, AsInt(r.threads.last));
      BindRange(*ins, 9, r.attach_latency_seconds);
      BindRange(*ins, 12, r.pool_budget_ratio);
      BindRange(*ins, 15, r.purge_seconds);
      ins->BindInt(18, r.max_worst_risk);
      ins->BindInt(19, r.last_worst_risk);
      if (ins->Step() != SQLITE_DONE) return SqliteError(db, "write rollup");
    }
    TH_RETURN_IF_ERROR(Exec(db, "DELETE FROM rollup_state"));
    TH_ASSIGN_OR_RETURN(
        auto mark,
        SqliteStatement::Prepare(
            db, "INSERT INTO rollup_state (rolled_through_ns) VALUES (?1)"));
    mark->BindInt(1, rolled_through_ns);
    if (mark->Step() != SQLITE_DONE) {
      return SqliteError(db, "write rollup watermark");
    }
    return Exec(db, "COMMIT");
  };
  absl::Status st = body();
  if (!st.ok()) (void)Exec(db, "ROLLBACK");
  return st;
}

absl::StatusOr<std::vector<RollupRow>> ReadRollups(sqlite3* db,
                                                   const std::string& host_id,
                                                   int64_t from_ns,
                                                   int64_t to_ns) {
  TH_ASSIGN_OR_RETURN(
      auto s, SqliteStatement::Prepare(
                  db, absl::StrCat("SELECT ", kColumns,
                                   " FROM rollups WHERE host_id = ?1 AND "
                                   "hour_start_ns >= ?2 AND hour_start_ns < "
                                   "?3 ORDER BY hour_start_ns")
                          .c_str()));
  s->BindText(1, host_id);
  s->BindInt(2, from_ns);
  s->BindInt(3, to_ns);
  std::vector<RollupRow> out;
  int rc;
  while ((rc = s->Step()) == SQLITE_ROW) {
    RollupRow r;
    r.host_id = s->Text(0);
    r.hour_start_ns = s->Int(1);
    r.reports = s->Int(2);
    r.first_seq = static_cast<uint64_t>(s->Int(3));
    r.last_seq = static_cast<uint64_t>(s->Int(4));
    r.threads = {OptUint(*s, 5), OptUint(*s, 6), OptUint(*s, 7)};
    r.attach_latency_seconds = DoubleRange(*s, 8);
    r.pool_budget_ratio = DoubleRange(*s, 11);
    r.purge_seconds = DoubleRange(*s, 14);
    r.max_worst_risk = static_cast<int>(s->Int(17));
    r.last_worst_risk = static_cast<int>(s->Int(18));
    out.push_back(std::move(r));
  }
  if (rc != SQLITE_DONE) return SqliteError(db, "read rollups");
  return out;
}

absl::StatusOr<int64_t> DeleteRollups(sqlite3* db, int64_t hour_before_ns) {
  TH_ASSIGN_OR_RETURN(auto s,
                      SqliteStatement::Prepare(
                          db, "DELETE FROM rollups WHERE hour_start_ns < ?1"));
  s->BindInt(1, hour_before_ns);
  if (s->Step() != SQLITE_DONE) return SqliteError(db, "delete rollups");
  return static_cast<int64_t>(sqlite3_changes(db));
}

}  // namespace tracehealth::server
