#include "server/storage/sqlite/heartbeats.h"

#include <sqlite3.h>

#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "server/storage/sqlite/connection.h"

namespace tracehealth::server {

absl::StatusOr<std::unique_ptr<SqliteHeartbeatWriter>>
SqliteHeartbeatWriter::Prepare(sqlite3* write_db) {
  std::unique_ptr<SqliteHeartbeatWriter> w(new SqliteHeartbeatWriter(write_db));
  TH_ASSIGN_OR_RETURN(
      w->insert_,
      SqliteStatement::Prepare(
          write_db,
          "INSERT INTO heartbeats (host_id, base_id, first_seq, last_seq, "
          "first_observed_ns, last_observed_ns, last_received_ns, beats) "
          "VALUES (?1, ?2, ?3, ?3, ?4, ?4, ?5, ?6)"));
  TH_ASSIGN_OR_RETURN(
      w->append_,
      SqliteStatement::Prepare(
          write_db,
          "UPDATE heartbeats SET beats = CAST(beats || ?1 AS BLOB), "
          "last_seq = ?2, first_observed_ns = min(first_observed_ns, ?3), "
          "last_observed_ns = max(last_observed_ns, ?3), "
          "last_received_ns = max(last_received_ns, ?4) WHERE id = ?5"));
  return w;
}

absl::Status SqliteHeartbeatWriter::Write(HeartbeatPolicy::Host& host,
                                          const ReportRow& row) {
  const Beat beat = BeatOf(row);
  if (host.chunk_id != 0 && host.encoder.Takes(beat)) {
    const std::string bytes = host.encoder.Append(beat);  // bound, not copied
    SqliteStatement& s = *append_;
    s.Reset();
    s.BindBlob(1, bytes);
    s.BindInt(2, static_cast<int64_t>(row.seq));
    s.BindInt(3, row.observed_at_ns);
    s.BindInt(4, row.received_at_ns);
    s.BindInt(5, host.chunk_id);
    const int rc = s.Step();
    s.Reset();
    if (rc != SQLITE_DONE || sqlite3_changes(db_) != 1) {
      return SqliteError(db_, "append heartbeat");
    }
    return absl::OkStatus();
  }
  const std::string bytes = host.encoder.Start(beat);
  SqliteStatement& s = *insert_;
  s.Reset();
  s.BindText(1, row.host_id);
  s.BindInt(2, host.base_id);
  s.BindInt(3, static_cast<int64_t>(row.seq));
  s.BindInt(4, row.observed_at_ns);
  s.BindInt(5, row.received_at_ns);
  s.BindBlob(6, bytes);
  const int rc = s.Step();
  s.Reset();
  if (rc != SQLITE_DONE) return SqliteError(db_, "insert heartbeat");
  host.chunk_id = sqlite3_last_insert_rowid(db_);
  return absl::OkStatus();
}

namespace {

absl::StatusOr<std::vector<StoredChunk>> Collect(sqlite3* db,
                                                 SqliteStatement& s,
                                                 const std::string& host_id) {
  std::vector<StoredChunk> out;
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) {
    StoredChunk c;
    c.base_id = s.Int(0);
    absl::StatusOr<std::vector<Beat>> beats = DecodeChunk(s.Blob(1));
    if (!beats.ok()) {
      return Annotate(beats.status(), absl::StrCat("heartbeats of ", host_id));
    }
    c.beats = *std::move(beats);
    out.push_back(std::move(c));
  }
  if (rc != SQLITE_DONE) return SqliteError(db, "read heartbeats");
  return out;
}

}  // namespace

absl::StatusOr<std::vector<StoredChunk>> ReadChunks(sqlite3* db,
                                                    const std::string& host_id,
                                                    int64_t from_ns,
                                                    int64_t to_ns) {
  TH_ASSIGN_OR_RETURN(
      auto s, SqliteStatement::Prepare(
                  db,
                  "SELECT base_id, beats FROM heartbeats WHERE host_id = ?1 "
                  "AND last_observed_ns >= ?2 AND first_observed_ns < ?3 "
                  "ORDER BY first_seq"));
  s->BindText(1, host_id);
  s->BindInt(2, from_ns);
  s->BindInt(3, to_ns);
  return Collect(db, *s, host_id);
}

absl::StatusOr<std::vector<StoredChunk>> ChunksAfter(sqlite3* db,
                                                     const std::string& host_id,
                                                     uint64_t after) {
  // From the chunk that may hold after + 1 (the last starting at or below
  // it) on: an index range, not the host's whole history.
  TH_ASSIGN_OR_RETURN(
      auto s,
      SqliteStatement::Prepare(
          db,
          "SELECT base_id, beats FROM heartbeats WHERE host_id = ?1 AND "
          "first_seq >= coalesce((SELECT max(first_seq) FROM heartbeats "
          "WHERE host_id = ?1 AND first_seq <= ?2), 0) AND last_seq > ?2 "
          "ORDER BY first_seq"));
  s->BindText(1, host_id);
  s->BindInt(2, static_cast<int64_t>(after));
  return Collect(db, *s, host_id);
}

absl::StatusOr<std::optional<std::pair<int64_t, Beat>>> FindBeat(
    sqlite3* db, const std::string& host_id, uint64_t seq) {
  TH_ASSIGN_OR_RETURN(
      auto s, SqliteStatement::Prepare(
                  db,
                  "SELECT base_id, beats, last_seq FROM heartbeats WHERE "
                  "host_id = ?1 AND first_seq <= ?2 ORDER BY first_seq DESC "
                  "LIMIT 1"));
  s->BindText(1, host_id);
  s->BindInt(2, static_cast<int64_t>(seq));
  const int rc = s->Step();
  if (rc == SQLITE_DONE) return std::nullopt;
  if (rc != SQLITE_ROW) return SqliteError(db, "find heartbeat");
  if (static_cast<uint64_t>(s->Int(2)) < seq) return std::nullopt;
  TH_ASSIGN_OR_RETURN(std::vector<Beat> beats, DecodeChunk(s->Blob(1)));
  for (const Beat& b : beats) {
    if (b.seq == seq) return std::make_pair(s->Int(0), b);
  }
  return std::nullopt;
}

absl::StatusOr<int64_t> DeleteOldChunks(sqlite3* db,
                                        int64_t received_before_ns) {
  TH_ASSIGN_OR_RETURN(
      auto del,
      SqliteStatement::Prepare(
          db,
          "DELETE FROM heartbeats WHERE last_received_ns < ?1 AND last_seq < "
          "(SELECT h.latest_seq FROM hosts h WHERE h.host_id = "
          "heartbeats.host_id) RETURNING beats"));
  TH_RETURN_IF_ERROR(Exec(db, "BEGIN IMMEDIATE"));
  del->BindInt(1, received_before_ns);
  int64_t deleted = 0;
  int rc;
  while ((rc = del->Step()) == SQLITE_ROW) {
    absl::StatusOr<std::vector<Beat>> beats = DecodeChunk(del->Blob(0));
    if (beats.ok()) deleted += static_cast<int64_t>(beats->size());
  }
  absl::Status st = rc == SQLITE_DONE ? absl::OkStatus()
                                      : SqliteError(db, "delete heartbeats");
  del.reset();
  if (st.ok()) st = Exec(db, "COMMIT");
  if (!st.ok()) {
    (void)Exec(db, "ROLLBACK");
    return st;
  }
  return deleted;
}

absl::StatusOr<int64_t> CountBeats(sqlite3* db, const std::string& host_id) {
  TH_ASSIGN_OR_RETURN(
      auto s, SqliteStatement::Prepare(
                  db, host_id.empty()
                          ? "SELECT beats FROM heartbeats"
                          : "SELECT beats FROM heartbeats WHERE host_id = ?1"));
  if (!host_id.empty()) s->BindText(1, host_id);
  int64_t n = 0;
  int rc;
  while ((rc = s->Step()) == SQLITE_ROW) {
    TH_ASSIGN_OR_RETURN(std::vector<Beat> beats, DecodeChunk(s->Blob(0)));
    n += static_cast<int64_t>(beats.size());
  }
  if (rc != SQLITE_DONE) return SqliteError(db, "count heartbeats");
  return n;
}

}  // namespace tracehealth::server
