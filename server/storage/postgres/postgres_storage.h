// PostgresStorage: the shared storage backend, for one or several server
// replicas on one PostgreSQL (15) database: ReportStore, AlertStore, and
// what replicas need besides (ChangeFeed, AlertTransitions, LeaseStore).
//
// Schema: versioned migrations (pg_migrations.h) applied by Open; a newer
// schema is refused. Reports are range-partitioned by receive time
// (pg_partitions.h), so retention at a partition boundary drops partitions
// instead of deleting rows (retention_granularity() is the span).
//
// Writes: WriteBatch stores a batch in one transaction: it locks the
// batch's hosts rows (replicas storing the same host wait for each other),
// looks up only the seqs at or below a host's newest (replays), sends the
// new rows with one binary COPY and updates the hosts rows. Commits wait for
// the WAL flush (synchronous_commit = on; with a synchronous standby, for
// it too). (host_id, seq) stays unique while the row is kept: a replay of a
// report that retention already deleted is stored again.
//
// Heartbeats: a report whose material content equals its host's stored
// full report is stored as a heartbeat (server/storage/heartbeat_policy.h,
// the same rule as the SQLite store's; pg_heartbeats.h), in the batch's
// transaction, under its host row's lock like a whole report, and only
// above the host's every stored seq (so replays are found as duplicates in
// the database). The policy's state is this instance's: a host's first
// report after Open, after a failed batch, and after another replica (or
// instance) stored the host's newest seq is stored whole, so a host that
// moves to another replica is stored whole first, as after a restart.
// GetReport rebuilds a heartbeat's report from its full report; LoadLatest
// and the change feed give a heartbeat host's newest seq with its full
// report's record (and report). Retention deletes a chunk once its last
// beat is older than the cutoff, unless it holds its host's newest seq, and
// keeps a full report while a chunk on it lives.
//
// Connections: one each for writes, reads, the change feed and alerts plus
// leases, each serialized by its own mutex. A broken connection is
// reconnected on next use (a multi-host DSN with
// target_session_attrs=read-write then finds the new primary); the call
// that found it broken fails with Unavailable.
//
// Thread safety: all methods are thread-safe.
#ifndef TRACEHEALTH_SERVER_STORAGE_POSTGRES_POSTGRES_STORAGE_H_
#define TRACEHEALTH_SERVER_STORAGE_POSTGRES_POSTGRES_STORAGE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/storage/alert_store.h"
#include "server/storage/alert_transitions.h"
#include "server/storage/calibration_store.h"
#include "server/storage/change_feed.h"
#include "server/storage/event_store.h"
#include "server/storage/heartbeat_policy.h"
#include "server/storage/lease_store.h"
#include "server/storage/postgres/pg_connection.h"
#include "server/storage/report_store.h"

namespace tracehealth::server {

struct PostgresOptions {
  // libpq connection string or URI, e.g.
  // "host=db1,db2 dbname=tracehealth target_session_attrs=read-write".
  std::string dsn;
  // Receive time each reports partition covers; the partition of now and
  // partitions_ahead more are created at Open, and more as batches come
  // within partitions_ahead spans of the end.
  absl::Duration partition_span = absl::Hours(24);
  int partitions_ahead = 2;
  // Apply migrations only up to this version (tests of old schemas); 0 =
  // all of them.
  int max_schema_version = 0;
  // Store a report whose material content equals its host's stored full
  // report as a heartbeat, and a full report at least this often per host
  // (heartbeat_policy.h). Zero: every report whole.
  absl::Duration full_report_interval = absl::Hours(6);
  PgConnection::Options connection;
  std::function<absl::Time()> now = [] { return absl::Now(); };
};

class PostgresStorage : public ReportStore,
                        public AlertStore,
                        public AlertTransitions,
                        public EventStore,
                        public CalibrationStore,
                        public LeaseStore,
                        public ChangeFeed {
 public:
  static int LatestSchemaVersion();

  // Connects, migrates and creates the current partitions. Errors:
  // Unavailable naming the DSN (without a password) when the database
  // cannot be reached; FailedPrecondition when its schema is newer than
  // this code; InvalidArgument for a partition span that is not a positive
  // whole number of seconds.
  static absl::StatusOr<std::unique_ptr<PostgresStorage>> Open(
      const PostgresOptions& options);

  ~PostgresStorage() override;
  PostgresStorage(const PostgresStorage&) = delete;
  PostgresStorage& operator=(const PostgresStorage&) = delete;

  absl::StatusOr<int> SchemaVersion();

  // ReportStore.
  absl::StatusOr<std::vector<WriteOutcome>> WriteBatch(
      absl::Span<const ReportRow> rows) override;
  absl::Status LoadLatest(const std::function<void(LatestRow&)>& fn) override;
  absl::StatusOr<int64_t> DeleteReportsReceivedBefore(
      int64_t received_before_ns) override;
  absl::Duration retention_granularity() const override {
    return options_.partition_span;
  }
  // Full reports and heartbeats.
  absl::StatusOr<int64_t> CountReports(const std::string& host_id) override;
  // A full report, or a heartbeat's report rebuilt from its full report
  // (heartbeat_report.h).
  absl::StatusOr<std::string> GetReport(const std::string& host_id,
                                        uint64_t seq) override;
  // Over every partition (the window is by observation time, partitions by
  // receive time); the host's rows are found by the primary key's prefix,
  // merged with its heartbeats.
  absl::StatusOr<HistoryRows> ReadHostHistory(const std::string& host_id,
                                              int64_t from_ns, int64_t to_ns,
                                              size_t max_rows) override;
  // The database's size (pg_database_size).
  absl::StatusOr<int64_t> SizeBytes() override;
  // Rollups (pg_rollups.h): a pass reads on the read connection in
  // single-row mode and writes in one transaction on the control connection.
  // FailedPrecondition on an old schema.
  absl::StatusOr<RollupPass> RollUp(int64_t before_ns, int max_hours) override;
  absl::StatusOr<std::vector<RollupRow>> ReadHostRollups(
      const std::string& host_id, int64_t from_ns, int64_t to_ns) override;
  absl::StatusOr<int64_t> DeleteRollupsBefore(int64_t hour_before_ns) override;

  // AlertStore, AlertTransitions (pg_alerts.h).
  absl::Status PutAlert(const AlertRow& alert) override;
  absl::StatusOr<std::vector<AlertRow>> ListAlerts(
      const AlertFilter& filter) override;
  absl::StatusOr<TransitionResult> TransitionAlert(
      const std::optional<AlertEpisode>& expected,
      const AlertRow& next) override;

  // EventStore (pg_events.h).
  absl::StatusOr<std::vector<bool>> PutEvents(
      absl::Span<const EventRow> rows) override;
  absl::StatusOr<std::vector<EventRow>> ListEvents(
      const EventFilter& filter) override;
  // CalibrationStore (pg_calibrations.h).
  absl::StatusOr<bool> PutCalibration(const CalibrationRow& row) override;
  absl::StatusOr<std::vector<CalibrationRow>> ListCalibrations() override;

  // LeaseStore: expiry by the database's clock.
  absl::StatusOr<bool> AcquireLease(const std::string& name,
                                    const std::string& holder,
                                    absl::Duration ttl) override;
  absl::Status ReleaseLease(const std::string& name,
                            const std::string& holder) override;

  // ChangeFeed: hosts changed by other PostgresStorage instances, found by
  // the transaction id that last changed them (hosts.change_xid) against
  // the oldest transaction still running at the previous poll.
  absl::Status Poll(const std::function<void(LatestRow&)>& fn) override;

 private:
  // A connection and the mutex that serializes its use.
  struct Slot {
    absl::Mutex mu;
    std::unique_ptr<PgConnection> conn ABSL_GUARDED_BY(mu);
  };
  explicit PostgresStorage(PostgresOptions options);
  // The slot's connection, connecting again if it broke.
  absl::StatusOr<PgConnection*> Ready(Slot& slot)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(slot.mu);
  // Creates the partition of `received_ns` and partitions_ahead more when
  // fewer than partitions_ahead spans past `received_ns` are covered.
  void CoverPartitions(PgConnection& conn, int64_t received_ns)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_.mu);
  // The transaction of WriteBatch (BEGIN .. COMMIT) on `conn`.
  absl::StatusOr<std::vector<WriteOutcome>> WriteInTransaction(
      PgConnection& conn, absl::Span<const ReportRow> rows)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_.mu);

  const PostgresOptions options_;
  const int64_t writer_id_;  // hosts.writer of this instance's changes
  bool old_schema_ = false;  // set by Open only
  Slot write_;
  int64_t covered_until_ns_ ABSL_GUARDED_BY(write_.mu) = 0;
  HeartbeatPolicy heartbeats_ ABSL_GUARDED_BY(write_.mu);
  Slot read_;
  Slot control_;  // alerts, leases, retention, rollup writes
  Slot feed_;
  std::string feed_horizon_ ABSL_GUARDED_BY(feed_.mu);  // an xid8, as text
};

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_STORAGE_POSTGRES_POSTGRES_STORAGE_H_
