#include "server/storage/sqlite_storage.h"

#include <pthread.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"

namespace tracehealth::server {
namespace {

// Ordered schema migrations: entry i brings the schema to version i + 1.
// Never edit a released entry; append a new one.
constexpr const char* kMigrations[] = {
    // 1: hosts and reports.
    R"sql(
CREATE TABLE hosts (
  host_id TEXT PRIMARY KEY,
  first_seen_ns INTEGER NOT NULL,
  last_seen_ns INTEGER NOT NULL,
  reports INTEGER NOT NULL,
  latest_seq INTEGER NOT NULL
);
CREATE TABLE reports (
  host_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  observed_at_ns INTEGER NOT NULL,
  received_at_ns INTEGER NOT NULL,
  worst_risk INTEGER NOT NULL,
  attach_latency_seconds REAL,
  pool_budget_ratio REAL,
  purge_seconds REAL,
  report BLOB NOT NULL,
  PRIMARY KEY (host_id, seq)
);
)sql",
    // 2: retention by observation time; alerts.
    R"sql(
CREATE INDEX reports_observed_at ON reports (observed_at_ns);
CREATE TABLE alerts (
  rule TEXT NOT NULL,
  host_id TEXT NOT NULL,
  state INTEGER NOT NULL,
  severity TEXT NOT NULL,
  labels_json TEXT NOT NULL,
  annotations_json TEXT NOT NULL,
  value REAL NOT NULL,
  active_since_ns INTEGER NOT NULL,
  fired_at_ns INTEGER,
  resolved_at_ns INTEGER,
  PRIMARY KEY (rule, host_id, active_since_ns)
);
CREATE INDEX alerts_state ON alerts (state);
)sql",
    // 3: retention walks rows in insertion order (rowid) by receive time;
    // the index on observed time cost a quarter of every insert.
    R"sql(
DROP INDEX reports_observed_at;
)sql",
    // 4: no unique index on reports (host_id, seq): duplicates are found in
    // the in-memory host ledger (host_ledger.h), checkpointed to hosts with
    // the stored seqs as runs ("1-500,503-900") and the newest row, plus the
    // last row the checkpoint covers. The index made every commit write a
    // random page per host. `id` keeps row numbers stable across VACUUM.
    R"sql(
ALTER TABLE hosts ADD COLUMN latest_rowid INTEGER NOT NULL DEFAULT 0;
ALTER TABLE hosts ADD COLUMN seq_runs TEXT NOT NULL DEFAULT '';
UPDATE hosts SET
  latest_rowid = coalesce((SELECT r.rowid FROM reports r
                           WHERE r.host_id = hosts.host_id AND r.seq = hosts.latest_seq), 0),
  seq_runs = coalesce((SELECT group_concat(CASE WHEN lo = hi THEN lo ELSE lo || '-' || hi END, ',')
                       FROM (SELECT min(seq) AS lo, max(seq) AS hi
                             FROM (SELECT seq, seq - row_number() OVER (ORDER BY seq) AS run
                                   FROM reports r WHERE r.host_id = hosts.host_id)
                             GROUP BY run)), '');
CREATE TABLE reports_v4 (
  id INTEGER PRIMARY KEY,
  host_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  observed_at_ns INTEGER NOT NULL,
  received_at_ns INTEGER NOT NULL,
  worst_risk INTEGER NOT NULL,
  attach_latency_seconds REAL,
  pool_budget_ratio REAL,
  purge_seconds REAL,
  report BLOB NOT NULL
);
INSERT INTO reports_v4 SELECT rowid, host_id, seq, observed_at_ns, received_at_ns, worst_risk,
  attach_latency_seconds, pool_budget_ratio, purge_seconds, report FROM reports ORDER BY rowid;
DROP TABLE reports;
ALTER TABLE reports_v4 RENAME TO reports;
CREATE TABLE ledger (through_rowid INTEGER NOT NULL);
INSERT INTO ledger SELECT coalesce(max(id), 0) FROM reports;
)sql",
};
constexpr int kLatestVersion = sizeof(kMigrations) / sizeof(kMigrations[0]);

absl::Status SqliteError(sqlite3* db, absl::string_view what) {
  int code = sqlite3_errcode(db);
  std::string msg = absl::StrCat(what, ": ", sqlite3_errmsg(db));
  switch (code & 0xff) {
    case SQLITE_FULL:
      return absl::ResourceExhaustedError(msg);
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
    case SQLITE_READONLY:
      return absl::PermissionDeniedError(msg);
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
      return absl::DataLossError(msg);
    case SQLITE_CONSTRAINT:
      return absl::AlreadyExistsError(msg);
    default:
      return absl::InternalError(msg);
  }
}

absl::Status Exec(sqlite3* db, const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err != nullptr ? err : "unknown error";
    sqlite3_free(err);
    return absl::InternalError(absl::StrCat("sqlite: ", msg));
  }
  return absl::OkStatus();
}

std::string MapToJson(const std::map<std::string, std::string>& m) {
  google::protobuf::Struct s;
  for (const auto& [k, v] : m) (*s.mutable_fields())[k].set_string_value(v);
  std::string out;
  (void)google::protobuf::util::MessageToJsonString(s, &out);
  return out;
}

std::map<std::string, std::string> JsonToMap(const std::string& json) {
  std::map<std::string, std::string> out;
  google::protobuf::Struct s;
  if (!google::protobuf::util::JsonStringToMessage(json, &s).ok()) return out;
  for (const auto& [k, v] : s.fields()) out[k] = v.string_value();
  return out;
}

absl::StatusOr<sqlite3*> OpenConnection(const std::string& path) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db,
                           SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
                               SQLITE_OPEN_NOMUTEX,
                           nullptr);
  if (rc != SQLITE_OK) {
    absl::Status st = db != nullptr
                          ? SqliteError(db, absl::StrCat("open ", path))
                          : absl::InternalError(absl::StrCat("open ", path));
    sqlite3_close(db);
    return st;
  }
  sqlite3_busy_timeout(db, 10000);
  return db;
}

}  // namespace

// RAII prepared statement.
class SqliteStatement {
 public:
  static absl::StatusOr<std::unique_ptr<SqliteStatement>> Prepare(
      sqlite3* db, const char* sql) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt,
                           nullptr) != SQLITE_OK) {
      return SqliteError(db, absl::StrCat("prepare ", sql));
    }
    return std::unique_ptr<SqliteStatement>(new SqliteStatement(db, stmt));
  }
  ~SqliteStatement() { sqlite3_finalize(stmt_); }

  sqlite3_stmt* get() { return stmt_; }
  void Reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  void BindText(int i, absl::string_view s) {
    sqlite3_bind_text(stmt_, i, s.data(), static_cast<int>(s.size()),
                      SQLITE_STATIC);
  }
  void BindBlob(int i, absl::string_view s) {
    sqlite3_bind_blob(stmt_, i, s.data(), static_cast<int>(s.size()),
                      SQLITE_STATIC);
  }
  void BindInt(int i, int64_t v) { sqlite3_bind_int64(stmt_, i, v); }
  void BindOptDouble(int i, const std::optional<double>& v) {
    if (v.has_value()) {
      sqlite3_bind_double(stmt_, i, *v);
    } else {
      sqlite3_bind_null(stmt_, i);
    }
  }
  void BindOptInt(int i, const std::optional<int64_t>& v) {
    if (v.has_value()) {
      sqlite3_bind_int64(stmt_, i, *v);
    } else {
      sqlite3_bind_null(stmt_, i);
    }
  }
  // SQLITE_ROW, SQLITE_DONE or an error code.
  int Step() { return sqlite3_step(stmt_); }
  std::string Text(int col) {
    const unsigned char* p = sqlite3_column_text(stmt_, col);
    int n = sqlite3_column_bytes(stmt_, col);
    return p != nullptr ? std::string(reinterpret_cast<const char*>(p), n)
                        : std::string();
  }
  std::string Blob(int col) {
    const void* p = sqlite3_column_blob(stmt_, col);
    int n = sqlite3_column_bytes(stmt_, col);
    return p != nullptr ? std::string(static_cast<const char*>(p), n)
                        : std::string();
  }
  int64_t Int(int col) { return sqlite3_column_int64(stmt_, col); }
  double Double(int col) { return sqlite3_column_double(stmt_, col); }
  bool IsNull(int col) { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }

 private:
  SqliteStatement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  sqlite3* db_;
  sqlite3_stmt* stmt_;
};

namespace {

absl::StatusOr<int> ReadVersion(sqlite3* db) {
  TH_RETURN_IF_ERROR(
      Exec(db, "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)"));
  TH_ASSIGN_OR_RETURN(auto stmt, SqliteStatement::Prepare(
                                     db, "SELECT max(version) FROM schema_version"));
  int rc = stmt->Step();
  if (rc != SQLITE_ROW) return SqliteError(db, "read schema_version");
  return stmt->IsNull(0) ? 0 : static_cast<int>(stmt->Int(0));
}

absl::Status Migrate(sqlite3* db, int target) {
  TH_ASSIGN_OR_RETURN(int version, ReadVersion(db));
  if (version > kLatestVersion) {
    return absl::FailedPreconditionError(absl::StrCat(
        "database schema version ", version, " is newer than this server's (",
        kLatestVersion, ")"));
  }
  for (int v = version; v < target; ++v) {
    TH_RETURN_IF_ERROR(Exec(db, "BEGIN IMMEDIATE"));
    absl::Status st = Exec(db, kMigrations[v]);
    if (st.ok()) {
      st = Exec(db, absl::StrCat("INSERT INTO schema_version VALUES (", v + 1,
                                 ")")
                        .c_str());
    }
    if (st.ok()) st = Exec(db, "COMMIT");
    if (!st.ok()) {
      (void)Exec(db, "ROLLBACK");
      return Annotate(st, absl::StrCat("schema migration to version ", v + 1));
    }
  }
  return absl::OkStatus();
}

}  // namespace

int SqliteStorage::LatestSchemaVersion() { return kLatestVersion; }

absl::StatusOr<std::unique_ptr<SqliteStorage>> SqliteStorage::Open(
    const std::string& path, const SqliteOptions& options) {
  TH_ASSIGN_OR_RETURN(sqlite3 * wdb, OpenConnection(path));
  auto fail = [&](absl::Status st, sqlite3* rdb) {
    sqlite3_close(wdb);
    if (rdb != nullptr) sqlite3_close(rdb);
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
  int target = options.max_schema_version > 0
                   ? std::min(options.max_schema_version, kLatestVersion)
                   : kLatestVersion;
  if (st.ok()) st = Migrate(wdb, target);
  if (!st.ok()) return fail(st, nullptr);
  absl::StatusOr<sqlite3*> rdb = OpenConnection(path);
  if (!rdb.ok()) return fail(rdb.status(), nullptr);
  std::unique_ptr<SqliteStorage> storage(new SqliteStorage(path, wdb, *rdb));
  storage->ledger_checkpoint_rows_ = options.ledger_checkpoint_rows;
  if (target < kLatestVersion) {
    // Migration tests only: the statements below need the latest schema.
    storage->old_schema_ = true;
    return storage;
  }
  TH_RETURN_IF_ERROR(storage->Prepare());
  {
    absl::MutexLock lock(&storage->write_mu_);
    if (absl::Status st = storage->LoadLedger(); !st.ok()) return Annotate(st, path);
  }
  if (options.background_checkpoint) storage->StartCheckpointer(options);
  return storage;
}

SqliteStorage::SqliteStorage(std::string path, sqlite3* write_db,
                             sqlite3* read_db)
    : path_(std::move(path)), write_db_(write_db), read_db_(read_db) {}

void SqliteStorage::StartCheckpointer(const SqliteOptions& options) {
  absl::StatusOr<sqlite3*> db = OpenConnection(path_);
  if (!db.ok()) {
    // Fall back to checkpoints inside commits.
    absl::MutexLock lock(&write_mu_);
    (void)Exec(write_db_, "PRAGMA wal_autocheckpoint=1000");
    return;
  }
  checkpoint_db_ = *db;
  // A connection opens the write-ahead log on its first read; until then
  // sqlite3_wal_checkpoint_v2 on it returns OK having copied nothing.
  if (!Exec(checkpoint_db_, "SELECT count(*) FROM sqlite_master").ok()) {
    sqlite3_close(checkpoint_db_);
    checkpoint_db_ = nullptr;
    absl::MutexLock lock(&write_mu_);
    (void)Exec(write_db_, "PRAGMA wal_autocheckpoint=1000");
    return;
  }
  {
    absl::MutexLock lock(&write_mu_);
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(write_db_, "PRAGMA page_size", -1, &st, nullptr) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW) {
      page_bytes_ = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    sqlite3_wal_hook(write_db_, &SqliteStorage::OnWalCommit, this);
  }
  wal_reset_bytes_ = options.wal_reset_bytes;
  wal_limit_bytes_ = options.wal_limit_bytes;
  absl::Duration interval = options.checkpoint_interval;
  checkpoint_thread_ = std::thread([this, interval] {
    pthread_setname_np(pthread_self(), "wal-checkpoint");
    while (!stop_checkpoints_.WaitForNotificationWithTimeout(interval)) {
      // PASSIVE: copies what it can without blocking the writer or readers.
      sqlite3_wal_checkpoint_v2(checkpoint_db_, nullptr, SQLITE_CHECKPOINT_PASSIVE,
                                nullptr, nullptr);
    }
  });
}

int SqliteStorage::OnWalCommit(void* self, sqlite3*, const char*, int frames) {
  // Called inside the COMMIT, with write_mu_ held by WriteBatch.
  SqliteStorage* storage = static_cast<SqliteStorage*>(self);
  storage->write_mu_.AssertHeld();
  storage->wal_frames_ = frames;
  return SQLITE_OK;
}

SqliteStorage::~SqliteStorage() {
  {
    // Save the ledger so that the next start replays nothing.
    absl::MutexLock lock(&write_mu_);
    if (!old_schema_ && ledger_valid_ && ledger_.changed() > 0) (void)CheckpointLedger();
  }
  if (checkpoint_thread_.joinable()) {
    stop_checkpoints_.Notify();
    checkpoint_thread_.join();
  }
  if (checkpoint_db_ != nullptr) {
    // Leave a small log behind: copy everything and truncate the WAL.
    sqlite3_wal_checkpoint_v2(checkpoint_db_, nullptr, SQLITE_CHECKPOINT_TRUNCATE, nullptr,
                              nullptr);
    sqlite3_close(checkpoint_db_);
  }
  {
    absl::MutexLock lock(&write_mu_);
    insert_report_.reset();
    put_host_.reset();
    set_through_.reset();
    sqlite3_close(write_db_);
  }
  absl::MutexLock lock(&read_mu_);
  sqlite3_close(read_db_);
}

absl::Status SqliteStorage::Prepare() {
  absl::MutexLock lock(&write_mu_);
  TH_ASSIGN_OR_RETURN(
      insert_report_,
      SqliteStatement::Prepare(
          write_db_,
          "INSERT INTO reports (host_id, seq, observed_at_ns, received_at_ns, worst_risk, "
          "attach_latency_seconds, pool_budget_ratio, purge_seconds, report) VALUES "
          "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"));
  TH_ASSIGN_OR_RETURN(
      put_host_,
      SqliteStatement::Prepare(
          write_db_,
          "INSERT OR REPLACE INTO hosts (host_id, first_seen_ns, last_seen_ns, reports, "
          "latest_seq, latest_rowid, seq_runs) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"));
  TH_ASSIGN_OR_RETURN(set_through_, SqliteStatement::Prepare(
                                        write_db_, "UPDATE ledger SET through_rowid = ?1"));
  return absl::OkStatus();
}

absl::Status SqliteStorage::LoadLedger() {
  ledger_.Clear();
  ledger_valid_ = false;
  TH_ASSIGN_OR_RETURN(
      auto hosts, SqliteStatement::Prepare(
                      write_db_,
                      "SELECT host_id, first_seen_ns, last_seen_ns, reports, latest_seq, "
                      "latest_rowid, seq_runs FROM hosts"));
  int rc;
  while ((rc = hosts->Step()) == SQLITE_ROW) {
    LedgerEntry e;
    e.first_seen_ns = hosts->Int(1);
    e.last_seen_ns = hosts->Int(2);
    e.reports = static_cast<uint64_t>(hosts->Int(3));
    e.latest_seq = static_cast<uint64_t>(hosts->Int(4));
    e.latest_rowid = hosts->Int(5);
    std::string host = hosts->Text(0);
    absl::StatusOr<SeqRuns> seqs = SeqRuns::Decode(hosts->Text(6));
    if (!seqs.ok()) return Annotate(seqs.status(), absl::StrCat("hosts row of ", host));
    e.seqs = *std::move(seqs);
    ledger_.Restore(std::move(host), std::move(e));
  }
  if (rc != SQLITE_DONE) return SqliteError(write_db_, "load hosts");
  TH_ASSIGN_OR_RETURN(auto through, SqliteStatement::Prepare(
                                        write_db_, "SELECT through_rowid FROM ledger"));
  if (through->Step() != SQLITE_ROW) return SqliteError(write_db_, "read ledger");
  ledger_through_ = through->Int(0);
  // Rows stored after the checkpoint, in the order they were stored.
  TH_ASSIGN_OR_RETURN(auto replay,
                      SqliteStatement::Prepare(
                          write_db_,
                          "SELECT id, host_id, seq, received_at_ns FROM reports WHERE id > ?1 "
                          "ORDER BY id"));
  replay->BindInt(1, ledger_through_);
  last_rowid_ = ledger_through_;
  while ((rc = replay->Step()) == SQLITE_ROW) {
    last_rowid_ = replay->Int(0);
    ledger_.Record(replay->Text(1), static_cast<uint64_t>(replay->Int(2)), replay->Int(3),
                   last_rowid_);
  }
  if (rc != SQLITE_DONE) return SqliteError(write_db_, "replay reports");
  replayed_rows_ = last_rowid_ - ledger_through_;
  ledger_valid_ = true;
  return absl::OkStatus();
}

absl::Status SqliteStorage::ReadyLedger() {
  if (old_schema_) {
    return absl::FailedPreconditionError("store opened below the latest schema version");
  }
  // After a failed transaction the ledger may hold rows that were rolled
  // back: read it again from the database.
  return ledger_valid_ ? absl::OkStatus() : LoadLedger();
}

void SqliteStorage::LedgerSaved() {
  ledger_.ClearChanged();
  ledger_through_ = last_rowid_;
}

absl::Status SqliteStorage::WriteLedgerRows() {
  SqliteStatement& put = *put_host_;
  // The callback is not analysed as running under write_mu_ (it is called
  // from HostLedger): it gets the connection, not the guarded member.
  sqlite3* const db = write_db_;
  absl::Status st;
  ledger_.ForEachChanged([&](const std::string& host, const LedgerEntry& e) {
    if (!st.ok()) return;
    const std::string seqs = e.seqs.Encode();
    put.Reset();
    put.BindText(1, host);
    put.BindInt(2, e.first_seen_ns);
    put.BindInt(3, e.last_seen_ns);
    put.BindInt(4, static_cast<int64_t>(e.reports));
    put.BindInt(5, static_cast<int64_t>(e.latest_seq));
    put.BindInt(6, e.latest_rowid);
    put.BindText(7, seqs);
    if (put.Step() != SQLITE_DONE) st = SqliteError(db, "write hosts row");
  });
  put.Reset();
  TH_RETURN_IF_ERROR(st);
  set_through_->Reset();
  set_through_->BindInt(1, last_rowid_);
  if (set_through_->Step() != SQLITE_DONE) {
    set_through_->Reset();
    return SqliteError(write_db_, "write ledger");
  }
  set_through_->Reset();
  return absl::OkStatus();
}

absl::Status SqliteStorage::CheckpointLedger() {
  TH_RETURN_IF_ERROR(Exec(write_db_, "BEGIN IMMEDIATE"));
  absl::Status st = WriteLedgerRows();
  if (st.ok() && sqlite3_exec(write_db_, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK) {
    st = SqliteError(write_db_, "commit ledger");
  }
  if (!st.ok()) {
    (void)Exec(write_db_, "ROLLBACK");
    return st;
  }
  LedgerSaved();
  return absl::OkStatus();
}

int64_t SqliteStorage::ledger_rows_replayed() {
  absl::MutexLock lock(&write_mu_);
  return replayed_rows_;
}

absl::StatusOr<int> SqliteStorage::SchemaVersion() {
  absl::MutexLock lock(&write_mu_);
  return ReadVersion(write_db_);
}

absl::StatusOr<std::vector<WriteOutcome>> SqliteStorage::WriteBatch(
    absl::Span<const ReportRow> rows) {
  std::vector<WriteOutcome> out;
  out.reserve(rows.size());
  if (rows.empty()) return out;
  absl::MutexLock lock(&write_mu_);
  TH_RETURN_IF_ERROR(ReadyLedger());
  TH_RETURN_IF_ERROR(Exec(write_db_, "BEGIN IMMEDIATE"));
  auto rollback = [&](absl::Status st)
                      ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_) {
                        (void)Exec(write_db_, "ROLLBACK");
                        ledger_valid_ = false;
                        return st;
                      };
  SqliteStatement& ins = *insert_report_;
  for (const ReportRow& r : rows) {
    if (ledger_.Seen(r.host_id, r.seq)) {
      out.push_back(WriteOutcome::kDuplicate);
      continue;
    }
    ins.Reset();
    ins.BindText(1, r.host_id);
    ins.BindInt(2, static_cast<int64_t>(r.seq));
    ins.BindInt(3, r.observed_at_ns);
    ins.BindInt(4, r.received_at_ns);
    ins.BindInt(5, r.worst_risk);
    ins.BindOptDouble(6, r.attach_latency_seconds);
    ins.BindOptDouble(7, r.pool_budget_ratio);
    ins.BindOptDouble(8, r.purge_seconds);
    ins.BindBlob(9, r.blob);
    if (ins.Step() != SQLITE_DONE) {
      absl::Status st = SqliteError(write_db_, "insert report");
      ins.Reset();
      return rollback(st);
    }
    last_rowid_ = sqlite3_last_insert_rowid(write_db_);
    ledger_.Record(r.host_id, r.seq, r.received_at_ns, last_rowid_);
    out.push_back(WriteOutcome::kStored);
  }
  ins.Reset();
  const bool checkpoint = last_rowid_ - ledger_through_ >= ledger_checkpoint_rows_;
  if (checkpoint) {
    if (absl::Status st = WriteLedgerRows(); !st.ok()) return rollback(st);
  }
  if (sqlite3_exec(write_db_, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK) {
    return rollback(SqliteError(write_db_, "commit"));
  }
  if (checkpoint) LedgerSaved();
  const int64_t wal_bytes = wal_frames_ * (page_bytes_ + 24);
  if (wal_limit_bytes_ > 0 && wal_bytes > wal_limit_bytes_) {
    // The background checkpointer fell behind (or readers pinned the log):
    // bound the disk used by checkpointing here, resetting the log.
    sqlite3_wal_checkpoint_v2(write_db_, nullptr, SQLITE_CHECKPOINT_RESTART, nullptr,
                              nullptr);
    wal_frames_ = 0;
  } else if (wal_reset_bytes_ > 0 && wal_bytes > wal_reset_bytes_) {
    // Copy the newest frames so that the next transaction starts the log
    // over (see SqliteOptions::wal_reset_bytes).
    sqlite3_wal_checkpoint_v2(write_db_, nullptr, SQLITE_CHECKPOINT_PASSIVE, nullptr,
                              nullptr);
    wal_frames_ = 0;
  }
  return out;
}

absl::Status SqliteStorage::LoadLatest(
    const std::function<void(LatestRow&)>& fn) {
  std::vector<std::pair<LatestRow, int64_t>> latest;  // row, latest_rowid
  {
    absl::MutexLock lock(&write_mu_);
    TH_RETURN_IF_ERROR(ReadyLedger());
    latest.reserve(ledger_.size());
    ledger_.ForEach([&](const std::string& host, const LedgerEntry& e) {
      LatestRow row;
      row.host_id = host;
      row.first_seen_ns = e.first_seen_ns;
      row.last_seen_ns = e.last_seen_ns;
      row.reports = e.reports;
      row.latest_seq = e.latest_seq;
      latest.emplace_back(std::move(row), e.latest_rowid);
    });
  }
  // Retention keeps each host's newest row, so every lookup finds one
  // unless the file was edited by hand: such a host is left out, as the
  // join of earlier versions left it out.
  absl::MutexLock lock(&read_mu_);
  TH_ASSIGN_OR_RETURN(auto stmt, SqliteStatement::Prepare(
                                     read_db_, "SELECT report FROM reports WHERE id = ?1"));
  for (auto& [row, rowid] : latest) {
    stmt->Reset();
    stmt->BindInt(1, rowid);
    int rc = stmt->Step();
    if (rc == SQLITE_DONE) continue;
    if (rc != SQLITE_ROW) return SqliteError(read_db_, "load latest report");
    row.blob = stmt->Blob(0);
    fn(row);
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> SqliteStorage::DeleteReportsReceivedBefore(
    int64_t received_before_ns) {
  // Rows are appended in commit order, so received_at_ns grows with rowid
  // (up to the few milliseconds one batch spans). Binary search over rowid
  // finds the end of the old rows without an index: invariant, every row
  // below `lo` is old and every row at or above `hi` is not.
  int64_t lo = 0, hi = 0;
  {
    absl::MutexLock lock(&read_mu_);
    TH_ASSIGN_OR_RETURN(auto bounds,
                        SqliteStatement::Prepare(
                            read_db_, "SELECT min(id), max(id) FROM reports"));
    if (bounds->Step() != SQLITE_ROW) return SqliteError(read_db_, "retention bounds");
    if (bounds->IsNull(0)) return 0;  // no rows
    lo = bounds->Int(0);
    hi = bounds->Int(1) + 1;
    TH_ASSIGN_OR_RETURN(
        auto probe,
        SqliteStatement::Prepare(read_db_,
                                 "SELECT id, received_at_ns FROM reports WHERE id >= ?1 "
                                 "ORDER BY id LIMIT 1"));
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      probe->Reset();
      probe->BindInt(1, mid);
      int rc = probe->Step();
      if (rc == SQLITE_ROW && probe->Int(0) < hi && probe->Int(1) < received_before_ns) {
        lo = probe->Int(0) + 1;
      } else if (rc == SQLITE_ROW || rc == SQLITE_DONE) {
        hi = mid;
      } else {
        return SqliteError(read_db_, "retention search");
      }
    }
    probe->Reset();
  }
  // The deletes keep each host's newest row by the hosts table: bring it up
  // to date. Rows stored later are newer than every row below `lo`.
  {
    absl::MutexLock lock(&write_mu_);
    TH_RETURN_IF_ERROR(ReadyLedger());
    if (ledger_.changed() > 0) TH_RETURN_IF_ERROR(CheckpointLedger());
  }
  // Delete [first row, lo) in chunks, one transaction each, so the writer
  // waits for one chunk at most.
  constexpr int64_t kChunkRows = 20000;
  int64_t deleted = 0;
  int64_t start = 0;
  {
    absl::MutexLock lock(&read_mu_);
    TH_ASSIGN_OR_RETURN(auto first,
                        SqliteStatement::Prepare(read_db_, "SELECT min(id) FROM reports"));
    if (first->Step() != SQLITE_ROW) return SqliteError(read_db_, "retention start");
    start = first->Int(0);
  }
  while (start < lo) {
    const int64_t end = std::min(lo, start + kChunkRows);
    absl::MutexLock lock(&write_mu_);
    TH_ASSIGN_OR_RETURN(
        auto stmt,
        SqliteStatement::Prepare(
            write_db_,
            "DELETE FROM reports WHERE id >= ?1 AND id < ?2 AND seq < "
            "(SELECT h.latest_seq FROM hosts h WHERE h.host_id = reports.host_id)"));
    stmt->BindInt(1, start);
    stmt->BindInt(2, end);
    if (stmt->Step() != SQLITE_DONE) return SqliteError(write_db_, "delete old reports");
    deleted += sqlite3_changes(write_db_);
    start = end;
  }
  return deleted;
}

absl::StatusOr<int64_t> SqliteStorage::CountReports(const std::string& host_id) {
  absl::MutexLock lock(&read_mu_);
  TH_ASSIGN_OR_RETURN(
      auto stmt, SqliteStatement::Prepare(
                     read_db_, host_id.empty()
                                   ? "SELECT count(*) FROM reports"
                                   : "SELECT count(*) FROM reports WHERE host_id = ?1"));
  if (!host_id.empty()) stmt->BindText(1, host_id);
  if (stmt->Step() != SQLITE_ROW) return SqliteError(read_db_, "count reports");
  return stmt->Int(0);
}

absl::StatusOr<std::string> SqliteStorage::GetReport(const std::string& host_id,
                                                     uint64_t seq) {
  absl::MutexLock lock(&read_mu_);
  TH_ASSIGN_OR_RETURN(
      auto stmt,
      SqliteStatement::Prepare(
          read_db_, "SELECT report FROM reports WHERE host_id = ?1 AND seq = ?2"));
  stmt->BindText(1, host_id);
  stmt->BindInt(2, static_cast<int64_t>(seq));
  int rc = stmt->Step();
  if (rc == SQLITE_DONE) {
    return absl::NotFoundError(absl::StrCat("no report ", host_id, "/", seq));
  }
  if (rc != SQLITE_ROW) return SqliteError(read_db_, "get report");
  return stmt->Blob(0);
}

absl::Status SqliteStorage::PutAlert(const AlertRow& a) {
  absl::MutexLock lock(&write_mu_);
  TH_ASSIGN_OR_RETURN(
      auto stmt,
      SqliteStatement::Prepare(
          write_db_,
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
  sqlite3_bind_double(stmt->get(), 7, a.value);
  stmt->BindInt(8, a.active_since_ns);
  stmt->BindOptInt(9, a.fired_at_ns);
  stmt->BindOptInt(10, a.resolved_at_ns);
  if (stmt->Step() != SQLITE_DONE) return SqliteError(write_db_, "put alert");
  return absl::OkStatus();
}

absl::StatusOr<std::vector<AlertRow>> SqliteStorage::ListAlerts(
    const AlertFilter& filter) {
  std::vector<int> states = filter.states;
  if (states.empty()) states = {1, 2};  // pending, firing
  std::string sql = absl::StrCat(
      "SELECT rule, host_id, state, severity, labels_json, annotations_json, "
      "value, active_since_ns, fired_at_ns, resolved_at_ns FROM alerts WHERE "
      "state IN (",
      absl::StrJoin(states, ","), ")",
      filter.host_id.empty() ? "" : " AND host_id = ?1",
      " ORDER BY active_since_ns DESC, rule, host_id LIMIT ",
      filter.limit == 0 ? 1000 : filter.limit);
  absl::MutexLock lock(&read_mu_);
  TH_ASSIGN_OR_RETURN(auto stmt, SqliteStatement::Prepare(read_db_, sql.c_str()));
  if (!filter.host_id.empty()) stmt->BindText(1, filter.host_id);
  std::vector<AlertRow> out;
  int rc;
  while ((rc = stmt->Step()) == SQLITE_ROW) {
    AlertRow a;
    a.rule = stmt->Text(0);
    a.host_id = stmt->Text(1);
    a.state = static_cast<int>(stmt->Int(2));
    a.severity = stmt->Text(3);
    a.labels = JsonToMap(stmt->Text(4));
    a.annotations = JsonToMap(stmt->Text(5));
    a.value = stmt->Double(6);
    a.active_since_ns = stmt->Int(7);
    if (!stmt->IsNull(8)) a.fired_at_ns = stmt->Int(8);
    if (!stmt->IsNull(9)) a.resolved_at_ns = stmt->Int(9);
    out.push_back(std::move(a));
  }
  if (rc != SQLITE_DONE) return SqliteError(read_db_, "list alerts");
  return out;
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
