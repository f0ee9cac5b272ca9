// SqliteStorage: the embedded storage backend (one SQLite file): the
// ReportStore, AlertStore and EventStore of the server, and what replicas need
// (AlertTransitions, LeaseStore, ChangeFeed) in the form one server needs
// it: one process holds the file, so leases live in memory and the change
// feed is always empty.
//
// Durability: the database runs in WAL mode. With the default
// synchronous=NORMAL a committed transaction survives a crash of the server
// process (kill -9): the WAL is written before commit returns, only the
// fsync at commit is skipped. With `synchronous_full` every commit is also
// fsynced, so it survives power loss, at a large cost in throughput.
//
// Schema: versioned migrations (migrations.h); Open applies every migration
// newer than the file's version. Duplicates are found in the host ledger
// (ledger.h) instead of a unique index; the write-ahead log is checkpointed
// off the commit path (wal_checkpointer.h).
//
// Thread safety: all methods are thread-safe. Writes (reports, alerts,
// retention's deletes) use one connection, serialized by a mutex; reads use
// a second connection so they do not wait for a write transaction.
#ifndef TRACEHEALTH_SERVER_STORAGE_SQLITE_SQLITE_STORAGE_H_
#define TRACEHEALTH_SERVER_STORAGE_SQLITE_SQLITE_STORAGE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/storage/alert_store.h"
#include "server/storage/alert_transitions.h"
#include "server/storage/calibration_store.h"
#include "server/storage/change_feed.h"
#include "server/storage/event_store.h"
#include "server/storage/heartbeat_policy.h"
#include "server/storage/lease_store.h"
#include "server/storage/report_store.h"

struct sqlite3;

namespace tracehealth::server {

class SqliteHeartbeatWriter;
class SqliteLedger;
class SqliteStatement;
class WalCheckpointer;

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
  // Checkpoint the host ledger (ledger.h) to the hosts table once this
  // many rows were stored since the last checkpoint, and at close. A start
  // after a crash replays at most this many rows.
  int64_t ledger_checkpoint_rows = 100000;
  // Checkpoint the write-ahead log on a background thread instead of
  // inside commits, so a commit never waits for the checkpoint's writes and
  // fsync; the writer resets the log past wal_reset_bytes and waits for a
  // full checkpoint past wal_limit_bytes (wal_checkpointer.h).
  bool background_checkpoint = true;
  absl::Duration checkpoint_interval = absl::Milliseconds(200);
  int64_t wal_reset_bytes = 64LL << 20;
  int64_t wal_limit_bytes = 512LL << 20;
  // Store a report whose material content equals its host's stored full
  // report as a heartbeat (heartbeat_policy.h), and a full report at least
  // this often per host. Zero: every report whole.
  absl::Duration full_report_interval = absl::Hours(6);
};

class SqliteStorage : public ReportStore,
                      public AlertStore,
                      public AlertTransitions,
                      public EventStore,
                      public CalibrationStore,
                      public LeaseStore,
                      public ChangeFeed {
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
  absl::Status LoadLatest(const std::function<void(LatestRow&)>& fn) override;
  absl::StatusOr<int64_t> DeleteReportsReceivedBefore(
      int64_t received_before_ns) override;
  absl::StatusOr<int64_t> CountReports(const std::string& host_id) override;
  // Full reports and heartbeats (a heartbeat's report is rebuilt from its
  // full report: heartbeat_report.h).
  // A host's newest committed report, and the one before it, are found by
  // row id (see newest_rows_); other seqs by a scan of the host's rows.
  absl::StatusOr<std::string> GetReport(const std::string& host_id,
                                        uint64_t seq) override;
  // A scan of the host's rows in the reports table (there is no index by
  // host: it would cost every commit a page per host), merged with its
  // heartbeats (by the heartbeats index); see the README.
  absl::StatusOr<HistoryRows> ReadHostHistory(const std::string& host_id,
                                              int64_t from_ns, int64_t to_ns,
                                              size_t max_rows) override;
  absl::Status PutAlert(const AlertRow& alert) override;
  absl::StatusOr<std::vector<AlertRow>> ListAlerts(
      const AlertFilter& filter) override;
  // One transaction on the write connection.
  absl::StatusOr<std::vector<bool>> PutEvents(
      absl::Span<const EventRow> rows) override;
  absl::StatusOr<std::vector<EventRow>> ListEvents(
      const EventFilter& filter) override;
  absl::StatusOr<bool> PutCalibration(const CalibrationRow& row) override;
  absl::StatusOr<std::vector<CalibrationRow>> ListCalibrations() override;
  // The database file plus its write-ahead log.
  absl::StatusOr<int64_t> SizeBytes() override;
  // Rollups (rollups.h): a pass reads on the read connection (a scan of the
  // reports and heartbeats tables) and writes in one transaction on the
  // write connection. FailedPrecondition on an old schema.
  absl::StatusOr<RollupPass> RollUp(int64_t before_ns, int max_hours) override;
  absl::StatusOr<std::vector<RollupRow>> ReadHostRollups(
      const std::string& host_id, int64_t from_ns, int64_t to_ns) override;
  absl::StatusOr<int64_t> DeleteRollupsBefore(int64_t hour_before_ns) override;
  // One transaction on the write connection.
  absl::StatusOr<TransitionResult> TransitionAlert(
      const std::optional<AlertEpisode>& expected,
      const AlertRow& next) override;
  // In memory, by the process's clock.
  absl::StatusOr<bool> AcquireLease(const std::string& name,
                                    const std::string& holder,
                                    absl::Duration ttl) override;
  absl::Status ReleaseLease(const std::string& name,
                            const std::string& holder) override;
  // Delivers nothing: every change is this store's.
  absl::Status Poll(const std::function<void(LatestRow&)>& fn) override {
    return absl::OkStatus();
  }

 private:
  SqliteStorage(std::string path, sqlite3* write_db, sqlite3* read_db);
  // Prepares the insert, loads the ledger and starts the checkpointer.
  absl::Status Init(const SqliteOptions& options);
  // OK when the ledger can be used: FailedPrecondition on an old schema;
  // reloads it after a failed transaction.
  absl::Status ReadyLedger() ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);

  const std::string path_;
  bool old_schema_ = false;  // set by Open only
  absl::Mutex write_mu_;
  sqlite3* const write_db_ ABSL_GUARDED_BY(write_mu_);
  std::unique_ptr<SqliteStatement> insert_report_ ABSL_GUARDED_BY(write_mu_);
  std::unique_ptr<SqliteStatement> insert_record_ ABSL_GUARDED_BY(write_mu_);
  // Null on an old schema, or until loaded.
  std::unique_ptr<SqliteLedger> ledger_ ABSL_GUARDED_BY(write_mu_);
  std::unique_ptr<HeartbeatPolicy> heartbeats_ ABSL_GUARDED_BY(write_mu_);
  std::unique_ptr<SqliteHeartbeatWriter> beat_writer_
      ABSL_GUARDED_BY(write_mu_);
  // Null: SQLite checkpoints inside commits.
  std::unique_ptr<WalCheckpointer> checkpointer_ ABSL_GUARDED_BY(write_mu_);
  absl::Mutex read_mu_;
  sqlite3* const read_db_ ABSL_GUARDED_BY(read_mu_);
  absl::Mutex lease_mu_;
  // name -> (holder, expiry)
  std::map<std::string, std::pair<std::string, absl::Time>> leases_
      ABSL_GUARDED_BY(lease_mu_);

  // Where each host's newest committed report (and the one before it) is:
  // the index reads a host's newest report by (host, seq) for GetHost and
  // explanations, and the reports table has no index by host. Updated after
  // each commit, so a reader never waits for a write transaction.
  // A heartbeat's row is its full report's.
  struct NewestRows {
    uint64_t seq = 0;
    int64_t rowid = 0;
    bool heartbeat = false;
    uint64_t previous_seq = 0;
    int64_t previous_rowid = 0;
    bool previous_heartbeat = false;
  };
  struct RowRef {
    int64_t rowid = 0;
    bool heartbeat = false;
  };
  // The row of (host_id, seq) when newest_rows_ has it.
  std::optional<RowRef> RowOf(const std::string& host_id, uint64_t seq);
  // The report of heartbeat (host_id, seq); NotFound when it is none.
  absl::StatusOr<std::string> HeartbeatReport(const std::string& host_id,
                                              uint64_t seq)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(read_mu_);
  absl::Mutex rows_mu_;
  absl::flat_hash_map<std::string, NewestRows> newest_rows_
      ABSL_GUARDED_BY(rows_mu_);
};

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_STORAGE_SQLITE_SQLITE_STORAGE_H_
