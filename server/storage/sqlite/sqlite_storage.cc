#include "server/storage/sqlite/sqlite_storage.h"

#include <sqlite3.h>
#include <sys/stat.h>

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "server/storage/heartbeat_report.h"
#include "server/storage/host_ledger.h"
#include "server/storage/sqlite/alerts.h"
#include "server/storage/sqlite/calibrations.h"
#include "server/storage/sqlite/connection.h"
#include "server/storage/sqlite/events.h"
#include "server/storage/sqlite/heartbeats.h"
#include "server/storage/sqlite/history.h"
#include "server/storage/sqlite/latest_rows.h"
#include "server/storage/sqlite/ledger.h"
#include "server/storage/sqlite/migrations.h"
#include "server/storage/sqlite/retention_search.h"
#include "server/storage/sqlite/statement.h"
#include "server/storage/sqlite/wal_checkpointer.h"

namespace tracehealth::server {

int SqliteStorage::LatestSchemaVersion() {
  return server::LatestSchemaVersion();
}

absl::StatusOr<std::unique_ptr<SqliteStorage>> SqliteStorage::Open(
    const std::string& path, const SqliteOptions& options) {
  TH_ASSIGN_OR_RETURN(sqlite3 * wdb, OpenConnection(path));
  auto fail = [&](absl::Status st) {
    sqlite3_close(wdb);
    return Annotate(st, path);
  };
  // Takes effect only while the file is empty (a new store); an existing
  // store keeps the page size it was created with.
  absl::Status st =
      Exec(wdb, absl::StrCat("PRAGMA page_size=", options.page_bytes).c_str());
  if (st.ok()) st = Exec(wdb, "PRAGMA journal_mode=WAL");
  if (st.ok()) {
    st = Exec(wdb, options.synchronous_full ? "PRAGMA synchronous=FULL"
                                            : "PRAGMA synchronous=NORMAL");
  }
  if (st.ok()) st = Exec(wdb, "PRAGMA cache_size=-65536");
  if (st.ok()) st = Exec(wdb, "PRAGMA journal_size_limit=67108864");
  if (st.ok() && options.background_checkpoint) {
    st = Exec(wdb, "PRAGMA wal_autocheckpoint=0");
  }
  const int latest = server::LatestSchemaVersion();
  const int target = options.max_schema_version > 0
                         ? std::min(options.max_schema_version, latest)
                         : latest;
  if (st.ok()) st = Migrate(wdb, target);
  if (!st.ok()) return fail(st);
  absl::StatusOr<sqlite3*> rdb = OpenConnection(path);
  if (!rdb.ok()) return fail(rdb.status());
  std::unique_ptr<SqliteStorage> storage(new SqliteStorage(path, wdb, *rdb));
  if (target < latest) {
    // Migration tests only: the statements below need the latest schema.
    storage->old_schema_ = true;
    return storage;
  }
  TH_RETURN_IF_ERROR(storage->Init(options));
  return storage;
}

SqliteStorage::SqliteStorage(std::string path, sqlite3* write_db,
                             sqlite3* read_db)
    : path_(std::move(path)), write_db_(write_db), read_db_(read_db) {}

absl::Status SqliteStorage::Init(const SqliteOptions& options) {
  absl::MutexLock lock(&write_mu_);
  TH_ASSIGN_OR_RETURN(
      insert_report_,
      SqliteStatement::Prepare(
          write_db_,
          "INSERT INTO reports (host_id, seq, observed_at_ns, received_at_ns, "
          "worst_risk, attach_latency_seconds, pool_budget_ratio, "
          "purge_seconds, report) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, "
          "?9)"));
  TH_ASSIGN_OR_RETURN(
      insert_record_,
      SqliteStatement::Prepare(
          write_db_, "INSERT INTO records (id, record) VALUES (?1, ?2)"));
  absl::StatusOr<std::unique_ptr<SqliteLedger>> ledger =
      SqliteLedger::Open(write_db_, options.ledger_checkpoint_rows);
  if (!ledger.ok()) return Annotate(ledger.status(), path_);
  ledger_ = *std::move(ledger);
  heartbeats_ = std::make_unique<HeartbeatPolicy>(options.full_report_interval);
  TH_ASSIGN_OR_RETURN(beat_writer_, SqliteHeartbeatWriter::Prepare(write_db_));
  absl::flat_hash_map<std::string, NewestRows> newest;
  newest.reserve(ledger_->hosts().size());
  ledger_->hosts().ForEach(
      [&newest](const std::string& host, const LedgerEntry& e) {
        NewestRows& n = newest[host];
        n.seq = e.latest_seq;
        n.rowid = e.latest_rowid;
      });
  {
    absl::MutexLock rows_lock(&rows_mu_);
    newest_rows_ = std::move(newest);
  }
  if (!options.background_checkpoint) return absl::OkStatus();
  WalCheckpointer::Options copts;
  copts.interval = options.checkpoint_interval;
  copts.reset_bytes = options.wal_reset_bytes;
  copts.limit_bytes = options.wal_limit_bytes;
  absl::StatusOr<std::unique_ptr<WalCheckpointer>> checkpointer =
      WalCheckpointer::Start(path_, write_db_, copts);
  if (checkpointer.ok()) {
    checkpointer_ = *std::move(checkpointer);
  } else {
    // Fall back to checkpoints inside commits.
    (void)Exec(write_db_, "PRAGMA wal_autocheckpoint=1000");
  }
  return absl::OkStatus();
}

SqliteStorage::~SqliteStorage() {
  std::unique_ptr<WalCheckpointer> checkpointer;
  {
    absl::MutexLock lock(&write_mu_);
    // Save the ledger so that the next start replays nothing.
    if (ledger_ != nullptr && ledger_->valid()) (void)ledger_->Checkpoint();
    checkpointer = std::move(checkpointer_);
  }
  // Stops its thread and truncates the log; nothing writes any more.
  checkpointer.reset();
  {
    absl::MutexLock lock(&write_mu_);
    // Statements first: a connection with live statements does not close.
    insert_report_.reset();
    insert_record_.reset();
    beat_writer_.reset();
    ledger_.reset();
    sqlite3_close(write_db_);
  }
  absl::MutexLock lock(&read_mu_);
  sqlite3_close(read_db_);
}

absl::Status SqliteStorage::ReadyLedger() {
  if (old_schema_) {
    return absl::FailedPreconditionError(
        "store opened below the latest schema version");
  }
  return ledger_->Ready();
}

int64_t SqliteStorage::ledger_rows_replayed() {
  absl::MutexLock lock(&write_mu_);
  return ledger_ != nullptr ? ledger_->rows_replayed() : 0;
}

absl::StatusOr<int> SqliteStorage::SchemaVersion() {
  absl::MutexLock lock(&write_mu_);
  return ReadSchemaVersion(write_db_);
}

absl::StatusOr<std::vector<WriteOutcome>> SqliteStorage::WriteBatch(
    absl::Span<const ReportRow> rows) {
  std::vector<WriteOutcome> out;
  out.reserve(rows.size());
  if (rows.empty()) return out;
  absl::MutexLock lock(&write_mu_);
  TH_RETURN_IF_ERROR(ReadyLedger());
  sqlite3* const db = write_db_;
  SqliteLedger& ledger = *ledger_;
  TH_RETURN_IF_ERROR(Exec(db, "BEGIN IMMEDIATE"));
  HeartbeatPolicy& policy = *heartbeats_;
  // The ledger and the policy may now hold rows that were rolled back.
  auto rollback = [db, &ledger, &policy](absl::Status st) {
    (void)Exec(db, "ROLLBACK");
    ledger.Invalidate();
    policy.Reset();
    return st;
  };
  SqliteStatement& ins = *insert_report_;
  std::vector<int64_t> rowids(rows.size(), 0);  // of the rows stored
  std::vector<bool> beats(rows.size(), false);  // stored as heartbeats
  std::string blob_scratch, record_scratch;     // WholeOf's
  for (size_t i = 0; i < rows.size(); ++i) {
    const ReportRow& r = rows[i];
    absl::StatusOr<bool> stored = ledger.Stored(r.host_id, r.seq);
    if (!stored.ok()) return rollback(stored.status());
    if (*stored) {
      out.push_back(WriteOutcome::kDuplicate);
      continue;
    }
    // A heartbeat only above the host's every stored seq (the ledger's
    // replay after a crash relies on it).
    const LedgerEntry* entry = ledger.hosts().Find(r.host_id);
    HeartbeatPolicy::Host* base = entry != nullptr && r.seq > entry->latest_seq
                                      ? policy.Fold(r)
                                      : nullptr;
    if (base != nullptr) {
      absl::Status st = beat_writer_->Write(*base, r);
      if (st.ok()) {
        st = ledger.RecordHeartbeat(r.host_id, r.seq, r.received_at_ns,
                                    base->base_id);
      }
      if (!st.ok()) return rollback(st);
      policy.StoredBeat(*base, r.seq);
      rowids[i] = base->base_id;
      beats[i] = true;
      out.push_back(WriteOutcome::kStored);
      continue;
    }
    const WholeParts parts = WholeOf(r, &blob_scratch, &record_scratch);
    ins.Reset();
    ins.BindText(1, r.host_id);
    ins.BindInt(2, static_cast<int64_t>(r.seq));
    ins.BindInt(3, r.observed_at_ns);
    ins.BindInt(4, r.received_at_ns);
    ins.BindInt(5, r.worst_risk);
    ins.BindOptDouble(6, r.attach_latency_seconds);
    ins.BindOptDouble(7, r.pool_budget_ratio);
    ins.BindOptDouble(8, r.purge_seconds);
    ins.BindBlob(9, *parts.blob);
    if (ins.Step() != SQLITE_DONE) {
      absl::Status st = SqliteError(db, "insert report");
      ins.Reset();
      return rollback(st);
    }
    rowids[i] = sqlite3_last_insert_rowid(db);
    if (!parts.record->empty()) {
      SqliteStatement& rec = *insert_record_;
      rec.Reset();
      rec.BindInt(1, rowids[i]);
      rec.BindBlob(2, *parts.record);
      const int rc = rec.Step();
      rec.Reset();
      if (rc != SQLITE_DONE) return rollback(SqliteError(db, "insert record"));
    }
    if (absl::Status st =
            ledger.Record(r.host_id, r.seq, r.received_at_ns, rowids[i]);
        !st.ok()) {
      return rollback(st);
    }
    policy.StoredFull(r, rowids[i]);
    out.push_back(WriteOutcome::kStored);
  }
  ins.Reset();
  const bool checkpoint = ledger.CheckpointDue();
  if (checkpoint) {
    if (absl::Status st = ledger.WriteRows(); !st.ok()) return rollback(st);
  }
  if (sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK) {
    return rollback(SqliteError(db, "commit"));
  }
  if (checkpoint) ledger.Saved();
  if (checkpointer_ != nullptr) checkpointer_->AfterCommit();
  {
    absl::MutexLock rows_lock(&rows_mu_);
    for (size_t i = 0; i < rows.size(); ++i) {
      if (rowids[i] == 0) continue;  // a duplicate
      NewestRows& n = newest_rows_[rows[i].host_id];
      if (rows[i].seq <= n.seq) continue;  // a replay of an older seq
      n.previous_seq = n.seq;
      n.previous_rowid = n.rowid;
      n.previous_heartbeat = n.heartbeat;
      n.seq = rows[i].seq;
      n.rowid = rowids[i];
      n.heartbeat = beats[i];
    }
  }
  return out;
}

absl::Status SqliteStorage::LoadLatest(
    const std::function<void(LatestRow&)>& fn) {
  std::vector<std::pair<LatestRow, int64_t>> latest;  // row, latest_rowid
  {
    absl::MutexLock lock(&write_mu_);
    TH_RETURN_IF_ERROR(ReadyLedger());
    const HostLedger& hosts = ledger_->hosts();
    latest.reserve(hosts.size());
    hosts.ForEach([&latest](const std::string& host, const LedgerEntry& e) {
      LatestRow row;
      row.host_id = host;
      row.first_seen_ns = e.first_seen_ns;
      row.last_seen_ns = e.last_seen_ns;
      row.reports = e.reports;
      row.latest_seq = e.latest_seq;
      latest.emplace_back(std::move(row), e.latest_rowid);
    });
  }
  absl::MutexLock lock(&read_mu_);
  return ReadLatestRows(read_db_, latest, fn);
}

absl::StatusOr<int64_t> SqliteStorage::DeleteReportsReceivedBefore(
    int64_t received_before_ns) {
  int64_t lo = 0;
  {
    absl::MutexLock lock(&read_mu_);
    TH_ASSIGN_OR_RETURN(std::optional<int64_t> end,
                        FindRetentionEnd(read_db_, received_before_ns));
    if (!end.has_value()) return 0;
    lo = *end;
  }
  // The deletes keep each host's newest row by the hosts table: bring it up
  // to date. Rows stored later are newer than every row below `lo`.
  {
    absl::MutexLock lock(&write_mu_);
    TH_RETURN_IF_ERROR(ReadyLedger());
    TH_RETURN_IF_ERROR(ledger_->Checkpoint());
  }
  // Heartbeats first: a full report is kept while a heartbeat chunk on it
  // lives (DeleteOldRows).
  int64_t deleted = 0;
  {
    absl::MutexLock lock(&write_mu_);
    TH_ASSIGN_OR_RETURN(deleted,
                        DeleteOldChunks(write_db_, received_before_ns));
  }
  // Delete [first row, lo) in chunks, one transaction each, so the writer
  // waits for one chunk at most.
  constexpr int64_t kChunkRows = 20000;
  int64_t start = 0;
  {
    absl::MutexLock lock(&read_mu_);
    TH_ASSIGN_OR_RETURN(
        auto first,
        SqliteStatement::Prepare(read_db_, "SELECT min(id) FROM reports"));
    if (first->Step() != SQLITE_ROW) {
      return SqliteError(read_db_, "retention start");
    }
    start = first->Int(0);
  }
  while (start < lo) {
    const int64_t end = std::min(lo, start + kChunkRows);
    absl::MutexLock lock(&write_mu_);
    TH_ASSIGN_OR_RETURN(const int64_t chunk_deleted,
                        DeleteOldRows(write_db_, start, end));
    deleted += chunk_deleted;
    start = end;
  }
  return deleted;
}

absl::StatusOr<int64_t> SqliteStorage::CountReports(
    const std::string& host_id) {
  absl::MutexLock lock(&read_mu_);
  TH_ASSIGN_OR_RETURN(
      auto stmt,
      SqliteStatement::Prepare(
          read_db_, host_id.empty()
                        ? "SELECT count(*) FROM reports"
                        : "SELECT count(*) FROM reports WHERE host_id = ?1"));
  if (!host_id.empty()) stmt->BindText(1, host_id);
  if (stmt->Step() != SQLITE_ROW) return SqliteError(read_db_, "count reports");
  TH_ASSIGN_OR_RETURN(const int64_t beats, CountBeats(read_db_, host_id));
  return stmt->Int(0) + beats;
}

absl::Status SqliteStorage::PutAlert(const AlertRow& alert) {
  absl::MutexLock lock(&write_mu_);
  return PutAlertRow(write_db_, alert);
}

absl::StatusOr<std::vector<AlertRow>> SqliteStorage::ListAlerts(
    const AlertFilter& filter) {
  absl::MutexLock lock(&read_mu_);
  return ListAlertRows(read_db_, filter);
}

absl::StatusOr<std::vector<bool>> SqliteStorage::PutEvents(
    absl::Span<const EventRow> rows) {
  absl::MutexLock lock(&write_mu_);
  return PutEventRows(write_db_, rows);
}

absl::StatusOr<std::vector<EventRow>> SqliteStorage::ListEvents(
    const EventFilter& filter) {
  absl::MutexLock lock(&read_mu_);
  return ListEventRows(read_db_, filter);
}

absl::StatusOr<bool> SqliteStorage::PutCalibration(const CalibrationRow& row) {
  absl::MutexLock lock(&write_mu_);
  return PutCalibrationRow(write_db_, row);
}

absl::StatusOr<std::vector<CalibrationRow>> SqliteStorage::ListCalibrations() {
  absl::MutexLock lock(&read_mu_);
  return ListCalibrationRows(read_db_);
}

absl::StatusOr<TransitionResult> SqliteStorage::TransitionAlert(
    const std::optional<AlertEpisode>& expected, const AlertRow& next) {
  absl::MutexLock lock(&write_mu_);
  return TransitionAlertRow(write_db_, expected, next);
}

absl::StatusOr<bool> SqliteStorage::AcquireLease(const std::string& name,
                                                 const std::string& holder,
                                                 absl::Duration ttl) {
  const absl::Time now = absl::Now();
  absl::MutexLock lock(&lease_mu_);
  auto it = leases_.find(name);
  if (it != leases_.end() && it->second.first != holder &&
      it->second.second > now) {
    return false;
  }
  leases_[name] = {holder, now + ttl};
  return true;
}

absl::Status SqliteStorage::ReleaseLease(const std::string& name,
                                         const std::string& holder) {
  absl::MutexLock lock(&lease_mu_);
  auto it = leases_.find(name);
  if (it != leases_.end() && it->second.first == holder) leases_.erase(it);
  return absl::OkStatus();
}

absl::StatusOr<int64_t> SqliteStorage::SizeBytes() {
  int64_t total = 0;
  for (const std::string& p : {path_, path_ + "-wal"}) {
    struct stat st;
    if (stat(p.c_str(), &st) == 0) total += st.st_size;
  }
  return total;
}

}  // namespace tracehealth::server
