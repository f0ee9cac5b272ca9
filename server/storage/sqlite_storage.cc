#include "server/storage/sqlite_storage.h"

#include <sqlite3.h>
#include <sys/stat.h>

#include <utility>

#include "absl/container/flat_hash_map.h"
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
  absl::Status st = Exec(wdb, "PRAGMA journal_mode=WAL");
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
  TH_RETURN_IF_ERROR(storage->Prepare());
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
    while (!stop_checkpoints_.WaitForNotificationWithTimeout(interval)) {
      // PASSIVE: copies what it can without blocking the writer or readers.
      sqlite3_wal_checkpoint_v2(checkpoint_db_, nullptr, SQLITE_CHECKPOINT_PASSIVE,
                                nullptr, nullptr);
    }
  });
}

int SqliteStorage::OnWalCommit(void* self, sqlite3*, const char*, int frames) {
  // Called inside the COMMIT, with write_mu_ held by WriteBatch.
  static_cast<SqliteStorage*>(self)->wal_frames_ = frames;
  return SQLITE_OK;
}

SqliteStorage::~SqliteStorage() {
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
    upsert_host_.reset();
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
          "INSERT OR IGNORE INTO reports (host_id, seq, observed_at_ns, "
          "received_at_ns, worst_risk, attach_latency_seconds, "
          "pool_budget_ratio, purge_seconds, report) VALUES "
          "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"));
  TH_ASSIGN_OR_RETURN(
      upsert_host_,
      SqliteStatement::Prepare(
          write_db_,
          "INSERT INTO hosts (host_id, first_seen_ns, last_seen_ns, reports, "
          "latest_seq) VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (host_id) DO "
          "UPDATE SET last_seen_ns = max(last_seen_ns, excluded.last_seen_ns), "
          "reports = reports + excluded.reports, "
          "latest_seq = max(latest_seq, excluded.latest_seq)"));
  return absl::OkStatus();
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
  struct HostAgg {
    int64_t first_seen_ns;
    int64_t last_seen_ns;
    int64_t reports = 0;
    uint64_t latest_seq = 0;
  };
  absl::flat_hash_map<absl::string_view, HostAgg> hosts;
  absl::MutexLock lock(&write_mu_);
  TH_RETURN_IF_ERROR(Exec(write_db_, "BEGIN IMMEDIATE"));
  auto rollback = [&](absl::Status st) {
    (void)Exec(write_db_, "ROLLBACK");
    return st;
  };
  SqliteStatement& ins = *insert_report_;
  for (const ReportRow& r : rows) {
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
    if (sqlite3_changes(write_db_) == 0) {
      out.push_back(WriteOutcome::kDuplicate);
      continue;
    }
    out.push_back(WriteOutcome::kStored);
    auto [it, inserted] = hosts.try_emplace(
        r.host_id, HostAgg{r.received_at_ns, r.received_at_ns});
    HostAgg& agg = it->second;
    agg.first_seen_ns = std::min(agg.first_seen_ns, r.received_at_ns);
    agg.last_seen_ns = std::max(agg.last_seen_ns, r.received_at_ns);
    agg.reports++;
    agg.latest_seq = std::max(agg.latest_seq, r.seq);
  }
  ins.Reset();
  SqliteStatement& up = *upsert_host_;
  for (const auto& [host, agg] : hosts) {
    up.Reset();
    up.BindText(1, host);
    up.BindInt(2, agg.first_seen_ns);
    up.BindInt(3, agg.last_seen_ns);
    up.BindInt(4, agg.reports);
    up.BindInt(5, static_cast<int64_t>(agg.latest_seq));
    if (up.Step() != SQLITE_DONE) {
      absl::Status st = SqliteError(write_db_, "upsert host");
      up.Reset();
      return rollback(st);
    }
  }
  up.Reset();
  if (sqlite3_exec(write_db_, "COMMIT", nullptr, nullptr, nullptr) !=
      SQLITE_OK) {
    return rollback(SqliteError(write_db_, "commit"));
  }
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
    const std::function<void(const LatestRow&)>& fn) {
  absl::MutexLock lock(&read_mu_);
  TH_ASSIGN_OR_RETURN(
      auto stmt,
      SqliteStatement::Prepare(
          read_db_,
          "SELECT h.host_id, h.first_seen_ns, h.last_seen_ns, h.reports, "
          "h.latest_seq, r.report FROM hosts h JOIN reports r ON "
          "r.host_id = h.host_id AND r.seq = h.latest_seq"));
  LatestRow row;
  int rc;
  while ((rc = stmt->Step()) == SQLITE_ROW) {
    row.host_id = stmt->Text(0);
    row.first_seen_ns = stmt->Int(1);
    row.last_seen_ns = stmt->Int(2);
    row.reports = static_cast<uint64_t>(stmt->Int(3));
    row.latest_seq = static_cast<uint64_t>(stmt->Int(4));
    row.blob = stmt->Blob(5);
    fn(row);
  }
  if (rc != SQLITE_DONE) return SqliteError(read_db_, "load latest reports");
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
                            read_db_, "SELECT min(rowid), max(rowid) FROM reports"));
    if (bounds->Step() != SQLITE_ROW) return SqliteError(read_db_, "retention bounds");
    if (bounds->IsNull(0)) return 0;  // no rows
    lo = bounds->Int(0);
    hi = bounds->Int(1) + 1;
    TH_ASSIGN_OR_RETURN(
        auto probe,
        SqliteStatement::Prepare(read_db_,
                                 "SELECT rowid, received_at_ns FROM reports WHERE rowid >= ?1 "
                                 "ORDER BY rowid LIMIT 1"));
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
  // Delete [first row, lo) in chunks, one transaction each, so the writer
  // waits for one chunk at most.
  constexpr int64_t kChunkRows = 20000;
  int64_t deleted = 0;
  int64_t start = 0;
  {
    absl::MutexLock lock(&read_mu_);
    TH_ASSIGN_OR_RETURN(auto first,
                        SqliteStatement::Prepare(read_db_, "SELECT min(rowid) FROM reports"));
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
            "DELETE FROM reports WHERE rowid >= ?1 AND rowid < ?2 AND seq < "
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
