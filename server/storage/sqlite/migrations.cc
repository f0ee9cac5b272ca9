#include "server/storage/sqlite/migrations.h"

#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "server/storage/sqlite/connection.h"
#include "server/storage/sqlite/statement.h"

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
    // 5: the seq runs of a host with more gaps than the ledger keeps in
    // memory (SeqRuns::kMaxRuns) are spilled to seq_spill, oldest first;
    // hosts.spilled_through is the highest seq answered there. Written only
    // when a host passes the bound, read only for a seq at or below it.
    R"sql(
ALTER TABLE hosts ADD COLUMN spilled_through INTEGER NOT NULL DEFAULT 0;
CREATE TABLE seq_spill (
  host_id TEXT NOT NULL,
  first INTEGER NOT NULL,
  last INTEGER NOT NULL,
  PRIMARY KEY (host_id, first)
) WITHOUT ROWID;
)sql",
    // 6: observed kernel events (event_store.h), one per (host, boot, kmsg
    // seq); listed newest logged first.
    R"sql(
CREATE TABLE events (
  host_id TEXT NOT NULL,
  boot_id TEXT NOT NULL,
  kmsg_seq INTEGER NOT NULL,
  logged_at_ns INTEGER NOT NULL,
  kind INTEGER NOT NULL,
  model INTEGER NOT NULL,
  predicted INTEGER NOT NULL,
  received_at_ns INTEGER NOT NULL,
  event BLOB NOT NULL,
  PRIMARY KEY (host_id, boot_id, kmsg_seq)
);
CREATE INDEX events_logged_at ON events (logged_at_ns);
)sql",
    // 7: host calibrations (calibration_store.h), one per (host, measured
    // at); the hardware classes' constants are rebuilt from them at start.
    R"sql(
CREATE TABLE calibrations (
  host_id TEXT NOT NULL,
  hardware_class TEXT NOT NULL,
  measured_at_ns INTEGER NOT NULL,
  c_visit_seconds REAL NOT NULL,
  fixed_seconds REAL NOT NULL,
  received_at_ns INTEGER NOT NULL,
  calibration BLOB NOT NULL,
  PRIMARY KEY (host_id, measured_at_ns)
);
)sql",
    // 8: each report's stored record (ReportRow::record), keyed by the
    // report's id, in a table of its own: a restart reads every host's
    // newest record, and ~40 of them share a page where a report fills one.
    // Rows stored before have none (their hosts are rebuilt from reports).
    R"sql(
CREATE TABLE records (
  id INTEGER PRIMARY KEY,
  record BLOB NOT NULL
);
)sql",
    // 9: heartbeats (heartbeats.h): reports whose material content equals
    // their host's stored full report, a few numbers each, in chunks of up
    // to an hour of one host's heartbeats on one full report (`base_id`).
    R"sql(
CREATE TABLE heartbeats (
  id INTEGER PRIMARY KEY,
  host_id TEXT NOT NULL,
  base_id INTEGER NOT NULL,
  first_seq INTEGER NOT NULL,
  last_seq INTEGER NOT NULL,
  first_observed_ns INTEGER NOT NULL,
  last_observed_ns INTEGER NOT NULL,
  last_received_ns INTEGER NOT NULL,
  beats BLOB NOT NULL
);
CREATE INDEX heartbeats_host ON heartbeats (host_id, first_seq);
CREATE INDEX heartbeats_base ON heartbeats (base_id);
)sql",
    // 10: hourly rollups (rollups.h): per (host, hour) the count, first and
    // last seq, min/max/last of threads and the three prediction columns
    // (NULL: no report of the hour carried it), max/last worst risk; kept
    // longer than the reports, deleted by hour (the index). rollup_state:
    // the pass's watermark, one row once a pass ran. From this version a
    // heartbeat chunk spans less than an hour (ChunkEncoder::kMaxSpanNs) and
    // is found by its first beat (heartbeats_first_observed);
    // heartbeat_spans: the newest first beat of a chunk written before,
    // whose span is not bounded (NULL: none).
    R"sql(
CREATE TABLE rollups (
  host_id TEXT NOT NULL,
  hour_start_ns INTEGER NOT NULL,
  reports INTEGER NOT NULL,
  first_seq INTEGER NOT NULL,
  last_seq INTEGER NOT NULL,
  threads_min INTEGER,
  threads_max INTEGER,
  threads_last INTEGER,
  attach_latency_seconds_min REAL,
  attach_latency_seconds_max REAL,
  attach_latency_seconds_last REAL,
  pool_budget_ratio_min REAL,
  pool_budget_ratio_max REAL,
  pool_budget_ratio_last REAL,
  purge_seconds_min REAL,
  purge_seconds_max REAL,
  purge_seconds_last REAL,
  worst_risk_max INTEGER NOT NULL,
  worst_risk_last INTEGER NOT NULL,
  PRIMARY KEY (host_id, hour_start_ns)
) WITHOUT ROWID;
CREATE INDEX rollups_hour ON rollups (hour_start_ns);
CREATE TABLE rollup_state (rolled_through_ns INTEGER NOT NULL);
CREATE INDEX heartbeats_first_observed ON heartbeats (first_observed_ns);
CREATE TABLE heartbeat_spans (unbounded_through_ns INTEGER);
INSERT INTO heartbeat_spans SELECT max(first_observed_ns) FROM heartbeats;
)sql",
};
constexpr int kLatestVersion = sizeof(kMigrations) / sizeof(kMigrations[0]);

}  // namespace

int LatestSchemaVersion() { return kLatestVersion; }

absl::StatusOr<int> ReadSchemaVersion(sqlite3* db) {
  TH_RETURN_IF_ERROR(Exec(
      db,
      "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)"));
  TH_ASSIGN_OR_RETURN(
      auto stmt,
      SqliteStatement::Prepare(db, "SELECT max(version) FROM schema_version"));
  int rc = stmt->Step();
  if (rc != SQLITE_ROW) return SqliteError(db, "read schema_version");
  return stmt->IsNull(0) ? 0 : static_cast<int>(stmt->Int(0));
}

absl::Status Migrate(sqlite3* db, int target) {
  TH_ASSIGN_OR_RETURN(int version, ReadSchemaVersion(db));
  if (version > kLatestVersion) {
    return absl::FailedPreconditionError(
        absl::StrCat("database schema version ", version,
                     " is newer than this server's (", kLatestVersion, ")"));
  }
  for (int v = version; v < target; ++v) {
    TH_RETURN_IF_ERROR(Exec(db, "BEGIN IMMEDIATE"));
    absl::Status st = Exec(db, kMigrations[v]);
    if (st.ok()) {
      st = Exec(db,
                absl::StrCat("INSERT INTO schema_version VALUES (", v + 1, ")")
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

}  // namespace tracehealth::server
