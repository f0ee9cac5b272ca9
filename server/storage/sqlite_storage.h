// SqliteStorage: the embedded storage backend (one SQLite file): the
// ReportStore and the AlertStore of the server.
//
// Durability: the database runs in WAL mode. With the default
// synchronous=NORMAL a committed transaction survives a crash of the server
// process (kill -9): the WAL is written before commit returns, only the
// fsync at commit is skipped. With `synchronous_full` every commit is also
// fsynced, so it survives power loss, at a large cost in throughput.
//
// Schema: versioned migrations (table schema_version); Open applies every
// migration newer than the file's version, in order, each in a transaction.
//
// Thread safety: all methods are thread-safe. Writes use one connection
// (serialized by a mutex); reads use a second connection so they do not
// wait for a write transaction.
#ifndef TRACEHEALTH_SERVER_STORAGE_SQLITE_STORAGE_H_
#define TRACEHEALTH_SERVER_STORAGE_SQLITE_STORAGE_H_

#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "server/storage/alert_store.h"
#include "server/storage/host_ledger.h"
#include "server/storage/report_store.h"

struct sqlite3;

namespace tracehealth::server {

class SqliteStatement;

struct SqliteOptions {
  // fsync every commit (power-loss durability).
  bool synchronous_full = false;
  // Apply migrations only up to this version (tests of old schemas); 0 =
  // all of them. A store opened below the latest version only migrates:
  // WriteBatch, LoadLatest and retention return FailedPrecondition.
  int max_schema_version = 0;
  // Page size of a new store. Reports (about 1.5 kB) are appended in row
  // order; 16 kB pages hold ten of them where 4 kB pages hold two, and the
  // log and its checkpoints move a quarter as many pages.
  int page_bytes = 16384;
  // Checkpoint the host ledger (host_ledger.h) to the hosts table once this
  // many rows were stored since the last checkpoint, and at close. A start
  // after a crash replays at most this many rows.
  int64_t ledger_checkpoint_rows = 100000;
  // Copy the write-ahead log into the database on a background thread (its
  // own connection, PASSIVE checkpoints) instead of inside commits, so a
  // commit never waits for the checkpoint's writes and fsync.
  bool background_checkpoint = true;
  absl::Duration checkpoint_interval = absl::Milliseconds(200);
  // With background checkpoints the log only starts over when a
  // transaction begins with every frame copied, which a writer that commits
  // back to back rarely sees. So once the log holds more than
  // wal_reset_bytes, the writer runs a PASSIVE checkpoint itself after its
  // commit: the background thread has copied all but the newest frames, so
  // this copies little, and the next transaction reuses the log from its
  // start (its blocks stay allocated and cached instead of the file
  // growing). Past wal_limit_bytes (readers pinning old frames) the writer
  // waits for a full RESTART checkpoint.
  int64_t wal_reset_bytes = 64LL << 20;
  int64_t wal_limit_bytes = 512LL << 20;
};

class SqliteStorage : public ReportStore, public AlertStore {
 public:
  // The newest schema version this code knows.
  static int LatestSchemaVersion();

  // Opens (creating if needed) the database file at `path` and migrates it.
  // Errors: the file cannot be opened, is not a database, or has a schema
  // newer than this code (FailedPrecondition).
  static absl::StatusOr<std::unique_ptr<SqliteStorage>> Open(
      const std::string& path, const SqliteOptions& options = {});

  ~SqliteStorage() override;
  SqliteStorage(const SqliteStorage&) = delete;
  SqliteStorage& operator=(const SqliteStorage&) = delete;

  // Schema version of the open file.
  absl::StatusOr<int> SchemaVersion();

  // Rows the last ledger load replayed (stored after its checkpoint).
  int64_t ledger_rows_replayed();

  absl::StatusOr<std::vector<WriteOutcome>> WriteBatch(
      absl::Span<const ReportRow> rows) override;
  absl::Status LoadLatest(
      const std::function<void(LatestRow&)>& fn) override;
  absl::StatusOr<int64_t> DeleteReportsReceivedBefore(
      int64_t received_before_ns) override;
  absl::StatusOr<int64_t> CountReports(const std::string& host_id) override;
  absl::StatusOr<std::string> GetReport(const std::string& host_id,
                                        uint64_t seq) override;
  absl::Status PutAlert(const AlertRow& alert) override;
  absl::StatusOr<std::vector<AlertRow>> ListAlerts(
      const AlertFilter& filter) override;
  absl::StatusOr<int64_t> SizeBytes() override;

 private:
  SqliteStorage(std::string path, sqlite3* write_db, sqlite3* read_db);
  absl::Status Prepare();
  // Reads the ledger checkpoint and replays the rows stored after it.
  absl::Status LoadLedger() ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  // OK when the ledger can be used: FailedPrecondition on an old schema;
  // reloads it after a failed transaction.
  absl::Status ReadyLedger() ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  // After WriteLedgerRows' transaction committed.
  void LedgerSaved() ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  // Writes the changed hosts and the rows covered, inside a transaction.
  absl::Status WriteLedgerRows() ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  // WriteLedgerRows in a transaction of its own.
  absl::Status CheckpointLedger() ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  void StartCheckpointer(const SqliteOptions& options);
  // sqlite3_wal_hook: records the frames in the log after each commit.
  static int OnWalCommit(void* self, sqlite3* db, const char* name, int frames);

  const std::string path_;
  absl::Mutex write_mu_;
  sqlite3* const write_db_ ABSL_GUARDED_BY(write_mu_);
  std::unique_ptr<SqliteStatement> insert_report_ ABSL_GUARDED_BY(write_mu_);
  std::unique_ptr<SqliteStatement> put_host_ ABSL_GUARDED_BY(write_mu_);
  std::unique_ptr<SqliteStatement> set_through_ ABSL_GUARDED_BY(write_mu_);
  bool old_schema_ = false;
  HostLedger ledger_ ABSL_GUARDED_BY(write_mu_);
  // False after a failed transaction until the ledger is loaded again.
  bool ledger_valid_ ABSL_GUARDED_BY(write_mu_) = false;
  int64_t ledger_checkpoint_rows_ = 100000;
  int64_t ledger_through_ ABSL_GUARDED_BY(write_mu_) = 0;  // rows the checkpoint covers
  int64_t last_rowid_ ABSL_GUARDED_BY(write_mu_) = 0;      // newest stored row
  int64_t replayed_rows_ ABSL_GUARDED_BY(write_mu_) = 0;   // by the last LoadLedger
  absl::Mutex read_mu_;
  sqlite3* const read_db_ ABSL_GUARDED_BY(read_mu_);
  // Frames in the log after the last commit (set by OnWalCommit).
  int64_t wal_frames_ ABSL_GUARDED_BY(write_mu_) = 0;
  int64_t page_bytes_ = 4096;
  int64_t wal_reset_bytes_ = 0;  // 0: SQLite's own autocheckpoint
  int64_t wal_limit_bytes_ = 0;
  sqlite3* checkpoint_db_ = nullptr;  // used by checkpoint_thread_ only
  absl::Notification stop_checkpoints_;
  std::thread checkpoint_thread_;
};

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_STORAGE_SQLITE_STORAGE_H_
